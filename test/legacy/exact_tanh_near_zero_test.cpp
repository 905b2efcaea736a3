// The exact tanh's near-zero shortcut (near_zero8 in brain/legacy/exact_tanh_simd.h,
// near_zero16 in exact_tanh_avx512.h): where it takes a vector its floats are at::tanh's, for
// every positive float below its bound (and a spread of negative ones), through both the
// eight- and the sixteen-lane walks; and it takes the cycle's values while declining the lanes
// it cannot prove (NaN, the bound, inputs whose tanh lies within Sleef's error of a rounding
// midpoint).
#include <torch/torch.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "brain/legacy/exact_tanh.h"
#include "brain/legacy/exact_tanh_simd.h"
#include "test/support/catch.h"
#include "test/support/skip.h"
#include "test/support/tanh_lanes.h"
#include "test/support/test_seed.h"

// named, not anonymous: the suite is built as unity batches
namespace exact_tanh_near_zero_test {

#if defined(__x86_64__) && defined(__GNUC__)
using fieldbrain::legacy::exact_tanh_detail::NearZero;

bool cpu_has_avx2() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
bool cpu_has_avx512() { return __builtin_cpu_supports("avx512f"); }

using fieldbrain::test::tanh_eight_lanes;
using fieldbrain::test::tanh_sixteen_lanes;
// whether near_zero8 takes the eight values, and what it gives
__attribute__((target("avx2,fma"))) bool shortcut8(const float* in, float* out) {
  __m256 y;
  const bool taken = fieldbrain::legacy::exact_tanh_detail::near_zero8(_mm256_loadu_ps(in), y);
  _mm256_storeu_ps(out, y);
  return taken;
}
__attribute__((target("avx512f"))) bool shortcut16(const float* in) {
  __m512 y;
  return fieldbrain::legacy::exact_tanh_wide_detail::near_zero16(_mm512_loadu_ps(in), y);
}

using fieldbrain::test::bits_of_float;
using fieldbrain::test::float_from_bits;
#endif

TEST_CASE(
    "Near zero the exact tanh gives at::tanh's float for every positive float below the "
    "shortcut's bound",
    "[legacy][exact]") {
#if defined(__x86_64__) && defined(__GNUC__)
  if (!cpu_has_avx2()) FIELDBRAIN_SKIP("no AVX2 + FMA here: no vector tanh");
  if (!fieldbrain::legacy::exact_tanh_available())
    FIELDBRAIN_SKIP("the exact tanh declines here: ATen's tanh is taken");
  const bool wide = cpu_has_avx512();
  // every bit pattern from +0 to the bound (1.04e9 floats: zeros, subnormals, the identity
  // range, the declined [2^-25, 2^-21), every midpoint-near input), then every 7th negative one
  const uint64_t top = bits_of_float(NearZero::kBound);
  std::vector<float> block(size_t{1} << 22);
  int64_t checked = 0;
  for (int sign = 0; sign < 2; ++sign) {
    const uint64_t step = sign == 0 ? 1 : 7;
    for (uint64_t base = 0; base < top; base += step * block.size()) {
      size_t n = 0;
      for (; n < block.size() && base + step * n < top; ++n)
        block[n] =
            float_from_bits(static_cast<uint32_t>(base + step * n) | (sign ? 0x80000000u : 0u));
      n = (n + 15) / 16 * 16;  // whole vectors (the tail is the previous block's values)
      const torch::Tensor x = torch::from_blob(block.data(), {static_cast<int64_t>(n)});
      const torch::Tensor expected = at::tanh(x);
      std::vector<float> eight(block.begin(), block.begin() + static_cast<int64_t>(n));
      tanh_eight_lanes(eight.data(), n);
      INFO("sign " << sign << ", block from bit pattern " << base);
      REQUIRE(std::memcmp(eight.data(), expected.data_ptr<float>(), n * sizeof(float)) == 0);
      if (wide) {
        std::vector<float> sixteen(block.begin(), block.begin() + static_cast<int64_t>(n));
        tanh_sixteen_lanes(sixteen.data(), n);
        REQUIRE(std::memcmp(sixteen.data(), expected.data_ptr<float>(), n * sizeof(float)) == 0);
      }
      checked += static_cast<int64_t>(n);
    }
  }
  CHECK(checked > 1040000000 + 148000000);
#else
  FIELDBRAIN_SKIP("not an x86-64 GCC build: no vector tanh");
#endif
}

TEST_CASE(
    "The near-zero shortcut takes the cycle's small values and declines what it cannot "
    "prove",
    "[legacy][exact]") {
#if defined(__x86_64__) && defined(__GNUC__)
  if (!cpu_has_avx2()) FIELDBRAIN_SKIP("no AVX2 + FMA here: no vector tanh");
  if (!fieldbrain::legacy::exact_tanh_available())
    FIELDBRAIN_SKIP("the exact tanh declines here: ATen's tanh is taken");
  std::mt19937_64 rng(fieldbrain::test::test_seed("exact tanh near zero"));
  float in[16], out[8];
  SECTION("vectors of the field's typical values (1e-4 to 4e-3, both signs) mostly take it") {
    std::uniform_real_distribution<float> magnitude(1e-4f, 4e-3f);
    int taken = 0;
    const int vectors = 20000;
    for (int v = 0; v < vectors; ++v) {
      for (int k = 0; k < 8; ++k) in[k] = (rng() & 1 ? -1.0f : 1.0f) * magnitude(rng);
      taken += shortcut8(in, out);
    }
    INFO(taken << " of " << vectors << " vectors taken");
    CHECK(taken >= vectors * 97 / 100);  // ~0.05% of such lanes are declined
  }
  SECTION("zeros, subnormals and values below 2^-25 are themselves, signs kept") {
    const float values[8] = {0.0f,
                             -0.0f,
                             std::numeric_limits<float>::denorm_min(),
                             -std::numeric_limits<float>::min(),
                             1e-30f,
                             -3e-9f,
                             0x1.fffffep-26f,
                             -0x1p-40f};
    REQUIRE(shortcut8(values, out));
    CHECK(std::memcmp(out, values, sizeof out) == 0);
  }
  SECTION("one lane it cannot prove sends the whole vector to Sleef's algorithm") {
    // the bound, a NaN, the range whose half ulp the margin exceeds, and two inputs whose
    // tanh lies closer to a rounding midpoint than Sleef's error (Sleef rounds them down, the
    // true value up: x + c would give the wrong float)
    const float declined[] = {
        NearZero::kBound, -0.2f,        std::numeric_limits<float>::quiet_NaN(), 3e-8f, -1e-7f,
        0x1.001134p-5f,   0x1.e8993p-6f};
    for (float bad : declined) {
      for (int k = 0; k < 8; ++k) in[k] = 1e-3f * static_cast<float>(k + 1);
      in[5] = bad;
      INFO("lane value " << bad);
      CHECK_FALSE(shortcut8(in, out));
      if (cpu_has_avx512()) {
        for (int k = 8; k < 16; ++k) in[k] = 2e-3f;
        CHECK_FALSE(shortcut16(in));
      }
    }
  }
  SECTION("the midpoint-near inputs get Sleef's float through the whole path") {
    // at::tanh's floats, one ulp below x + c rounded
    float x[8] = {0x1.001134p-5f,  0x1.e8993p-6f, 0x1.f5ee6cp-6f, 0x1.ef456p-6f,
                  -0x1.001134p-5f, 1e-3f,         2e-3f,          3e-3f};
    const torch::Tensor expected = at::tanh(torch::from_blob(x, {8}).clone());
    tanh_eight_lanes(x, 8);
    CHECK(std::memcmp(x, expected.data_ptr<float>(), sizeof x) == 0);
    CHECK(x[0] == 0x1.fff7b8p-6f);
  }
#else
  FIELDBRAIN_SKIP("not an x86-64 GCC build: no vector tanh");
#endif
}

}  // namespace exact_tanh_near_zero_test
