// The sixteen-lane exact tanh (brain/legacy/exact_tanh_avx512.h), which exact_tanh_inplace takes
// on CPUs with AVX-512F, against the eight-lane one (exact_tanh_simd.h, itself held against
// at::tanh in exact_math_test.cpp): the same float in every lane, over a spread of all bit
// patterns, over vectors where the two take different paths (eight small values beside eight
// larger ones: the short path for eight lanes, the whole path for sixteen), and for every
// length and offset the in-place walk sees.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "brain/legacy/exact_tanh.h"
#include "brain/legacy/exact_tanh_avx512.h"
#include "brain/legacy/exact_tanh_simd.h"
#include "test/support/catch.h"
#include "test/support/skip.h"
#include "test/support/tanh_lanes.h"
#include "test/support/test_seed.h"

// named, not anonymous: the suite is built as unity batches
namespace exact_tanh_wide_test {

#if defined(__x86_64__) && defined(__GNUC__)
bool cpu_has_both() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("avx512f");
}

// the first index where the two walks' bits differ, or -1
int64_t first_difference(const std::vector<float>& in) {
  std::vector<float> a = in, b = in;
  fieldbrain::test::tanh_eight_lanes(a.data(), a.size());
  fieldbrain::test::tanh_sixteen_lanes(b.data(), b.size());
  for (size_t i = 0; i < in.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) return static_cast<int64_t>(i);
  return -1;
}

using fieldbrain::test::float_from_bits;
#endif

TEST_CASE(
    "The sixteen-lane tanh gives the eight-lane tanh's float for a spread of all bit patterns",
    "[legacy][exact]") {
#if defined(__x86_64__) && defined(__GNUC__)
  if (!cpu_has_both()) FIELDBRAIN_SKIP("no AVX2 + FMA + AVX-512F here");
  // every 17th pattern in blocks of 2^22 (zeros, subnormals, every exponent, both signs,
  // infinities, NaNs), 253 million values
  std::vector<float> block(size_t{1} << 22);
  int64_t checked = 0;
  for (uint64_t base = 0; base < (uint64_t{1} << 32); base += 17 * block.size()) {
    for (size_t i = 0; i < block.size(); ++i)
      block[i] = float_from_bits(static_cast<uint32_t>(base + 17 * i));
    const int64_t at = first_difference(block);
    INFO("block from bit pattern " << base << ", index " << at);
    REQUIRE(at == -1);
    checked += static_cast<int64_t>(block.size());
  }
  CHECK(checked > 250000000);
#else
  FIELDBRAIN_SKIP("not an x86-64 GCC build: no vector tanh");
#endif
}

TEST_CASE("The sixteen-lane tanh of small values beside larger ones gives the short path's floats",
          "[legacy][exact]") {
#if defined(__x86_64__) && defined(__GNUC__)
  if (!cpu_has_both()) FIELDBRAIN_SKIP("no AVX2 + FMA + AVX-512F here");
  // eight lanes of |values| < 0.34 take exp_pair_small in tanh8; beside eight larger ones in
  // one sixteen-lane vector they take the whole path: every 61st float below 0.34 (both
  // signs), then random field-sized values, each vector's upper half random up to 12
  const float bound = 0.34f;
  uint32_t top;
  std::memcpy(&top, &bound, sizeof top);
  std::mt19937_64 rng(fieldbrain::test::test_seed("exact tanh wide"));
  std::uniform_real_distribution<float> larger(-12.0f, 12.0f), field(-4e-3f, 4e-3f);
  std::vector<float> in;
  auto push_small = [&](float v) {
    in.push_back(v);
    if (in.size() % 16 == 8)
      for (int k = 0; k < 8; ++k) in.push_back(k == 3 ? 0.5f : larger(rng));
  };
  for (uint32_t b = 0; b < top; b += 61) {
    push_small(float_from_bits(b));
    push_small(-float_from_bits(b));
  }
  for (int i = 0; i < 2000000; ++i) push_small(field(rng));
  while (in.size() % 16 != 0) in.push_back(0.0f);
  INFO(in.size() << " values");
  CHECK(in.size() > 70000000);  // 36 million small values, as many larger ones
  CHECK(first_difference(in) == -1);
#else
  FIELDBRAIN_SKIP("not an x86-64 GCC build: no vector tanh");
#endif
}

TEST_CASE("The in-place exact tanh gives the eight-lane tanh's floats for every length and offset",
          "[legacy][exact]") {
#if defined(__x86_64__) && defined(__GNUC__)
  if (!cpu_has_both()) FIELDBRAIN_SKIP("no AVX2 + FMA + AVX-512F here");
  if (!fieldbrain::legacy::exact_tanh_available())
    FIELDBRAIN_SKIP("the exact tanh declines here: ATen's tanh is taken");
  REQUIRE(fieldbrain::legacy::exact_tanh_is_wide());
  std::mt19937_64 rng(fieldbrain::test::test_seed("exact tanh wide lengths"));
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  std::vector<float> pool(4096 + 64);
  for (float& v : pool) v = value(rng) * (value(rng) > 0 ? 1.0f : 1e-3f);
  for (int64_t offset = 0; offset < 4; ++offset)
    for (int64_t n = 0; n <= 200; ++n) {
      std::vector<float> ours = pool;
      exact_tanh_inplace(ours.data() + offset, n);
      // the reference: the same values in a buffer padded to whole vectors of eight
      std::vector<float> expected(pool.begin() + offset, pool.begin() + offset + n);
      expected.resize(static_cast<size_t>((n + 7) / 8 * 8), 0.0f);
      fieldbrain::test::tanh_eight_lanes(expected.data(), expected.size());
      INFO("offset " << offset << ", length " << n);
      CHECK(std::memcmp(ours.data() + offset, expected.data(), sizeof(float) * n) == 0);
      // nothing outside the range written
      CHECK(std::memcmp(ours.data(), pool.data(), sizeof(float) * offset) == 0);
      CHECK(std::memcmp(ours.data() + offset + n, pool.data() + offset + n,
                        sizeof(float) * (pool.size() - offset - n)) == 0);
    }
#else
  FIELDBRAIN_SKIP("not an x86-64 GCC build: no vector tanh");
#endif
}

}  // namespace exact_tanh_wide_test
