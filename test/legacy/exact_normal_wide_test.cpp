// The normal draws' sixteen-lane Box-Muller transform (box_muller_32 in
// brain/legacy/exact_normal.cpp, which the fill takes on CPUs with AVX-512F) against the
// eight-lane one (box_muller_16, itself held to at::normal_ in exact_math_test.cpp): the same
// float for every uniform the generator can give (all 2^24 of them, as u1 and as u2), at two
// means and deviations.
#include <cstdint>
#include <cstring>
#include <vector>

#include "brain/legacy/exact_normal.h"
#include "test/support/catch.h"
#include "test/support/skip.h"

// named, not anonymous: the suite is built as unity batches
namespace exact_normal_wide_test {

TEST_CASE(
    "The sixteen-lane Box-Muller transform gives the eight-lane one's floats for every "
    "uniform",
    "[legacy][exact]") {
  std::vector<float> probe(32, 0.5f);
  if (!fieldbrain::legacy::exact_box_muller(probe.data(), 32, 0.0f, 1.0f, true))
    FIELDBRAIN_SKIP("no AVX-512F (or no AVX2 + FMA) here: the fill takes eight lanes only");
  // Blocks of 16: values 0-7 are u1's, 8-15 u2's. Every 24-bit uniform k * 2^-24 once as a u1
  // and once as a u2, each beside another one, 2^26 values in all, 2^20 uniforms at a time.
  const int64_t count = int64_t{1} << 24, chunk = int64_t{1} << 20;
  std::vector<float> in(static_cast<size_t>(4 * chunk)), narrow, wide;
  int64_t compared = 0;
  for (int64_t k0 = 0; k0 < count; k0 += chunk) {
    for (int64_t i = 0; i < chunk; ++i) {
      const int64_t k = k0 + i, block = i / 8, lane = i % 8;
      const auto u = static_cast<float>(k) * 0x1p-24f;
      const auto v = static_cast<float>((k * 40503 + 8) % count) * 0x1p-24f;
      in[static_cast<size_t>(block * 16 + lane)] = u;  // as u1
      in[static_cast<size_t>(block * 16 + 8 + lane)] = v;
      in[static_cast<size_t>(2 * chunk + block * 16 + lane)] = v;
      in[static_cast<size_t>(2 * chunk + block * 16 + 8 + lane)] = u;  // as u2
    }
    for (const auto& [mean, std] : {std::pair<float, float>{0.0f, 1.0f}, {0.3f, 1.7f}}) {
      narrow = in;
      wide = in;
      REQUIRE(fieldbrain::legacy::exact_box_muller(narrow.data(), 4 * chunk, mean, std, false));
      REQUIRE(fieldbrain::legacy::exact_box_muller(wide.data(), 4 * chunk, mean, std, true));
      if (std::memcmp(narrow.data(), wide.data(), sizeof(float) * in.size()) != 0) {
        size_t i = 0;
        while (std::memcmp(&narrow[i], &wide[i], sizeof(float)) == 0) ++i;
        FAIL("uniforms from " << k0 << ", mean " << mean << ", std " << std << ": input " << in[i]
                              << " at " << i << " gives " << narrow[i] << " (eight lanes) and "
                              << wide[i] << " (sixteen)");
      }
      CHECK(narrow != in);  // the transform ran
      compared += static_cast<int64_t>(in.size());
    }
  }
  CHECK(compared == 2 * 4 * count);
}

}  // namespace exact_normal_wide_test
