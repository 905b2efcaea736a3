// The spontaneous activity's traveling waves (brain/legacy/traveling_waves.h) made by loops,
// against the port's ATen expression of the original's _generate_traveling_waves: the same
// floats, bit for bit, for many sizes, wave sets, phase offsets and amplitudes.
#include "brain/legacy/traveling_waves.h"

#include <torch/torch.h>

#include <cstring>
#include <random>

#include "test/support/catch.h"
#include "test/support/skip.h"
#include "test/support/test_seed.h"

// named, not anonymous: the suite is built as unity batches
namespace traveling_waves_test {

bool same_bits(const torch::Tensor& a_in, const torch::Tensor& b_in) {
  const torch::Tensor a = a_in.contiguous(), b = b_in.contiguous();
  return a.sizes() == b.sizes() &&
         std::memcmp(a.data_ptr<float>(), b.data_ptr<float>(),
                     static_cast<std::size_t>(a.numel()) * sizeof(float)) == 0;
}

// n directions as the original draws them (normal, then divided by their norm + 1e-8), or raw
// normal draws times `scale` (steeper and flatter waves than the cycle's)
torch::Tensor wave_set(std::mt19937_64& rng, int64_t n, float scale, bool normalised) {
  torch::Tensor wv = torch::empty({n, 3}, torch::kFloat32);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  float* p = wv.data_ptr<float>();
  for (int64_t i = 0; i < 3 * n; ++i) p[i] = normal(rng) * scale;
  if (!normalised) return wv;
  for (int64_t i = 0; i < n; ++i) wv[i] = wv[i] / (torch::norm(wv[i]) + 1e-8);
  return wv;
}

}  // namespace traveling_waves_test

namespace twt = traveling_waves_test;
using fieldbrain::legacy::traveling_waves_aten;
using fieldbrain::legacy::TravelingWaves;

TEST_CASE("The traveling waves' loops equal the ATen expression for every size and wave set",
          "[legacy][exact]") {
  if (!TravelingWaves::exact_available()) {
    FIELDBRAIN_SKIP("this LibTorch's wave expression differs from the loops: the cycle calls ATen");
    return;
  }
  std::mt19937_64 rng(fieldbrain::test::test_seed("traveling waves"));
  std::uniform_real_distribution<double> offsets(-50.0, 5000.0), amplitudes(1e-5, 2.0);
  TravelingWaves waves;  // one object for all: its buffers follow R up and down
  int64_t fields = 0, differing = 0;
  for (int64_t R = 1; R <= 33; R += (R < 20 ? 1 : 4)) {
    for (int64_t n : {1, 5, 8}) {
      for (int k = 0; k < 6; ++k) {
        const torch::Tensor wv = twt::wave_set(rng, n, k % 3 == 2 ? 40.0f : 1.0f, k % 3 == 0);
        const double offset = k < 2 ? 0.1 * static_cast<double>(k * 997) : offsets(rng);
        const double amp = k == 0 ? 0.001 * 5.0 : amplitudes(rng);
        const torch::Tensor& got = waves.generate(wv, R, offset, amp);
        ++fields;
        if (!twt::same_bits(got, traveling_waves_aten(wv, R, offset, amp))) ++differing;
      }
    }
  }
  INFO(differing << " of " << fields << " wave fields differ");
  CHECK(differing == 0);
}

TEST_CASE("The traveling waves over 3,000 cycles of phase offsets equal the ATen expression",
          "[legacy][exact]") {
  if (!TravelingWaves::exact_available()) {
    FIELDBRAIN_SKIP("this LibTorch's wave expression differs from the loops: the cycle calls ATen");
    return;
  }
  std::mt19937_64 rng(fieldbrain::test::test_seed("traveling waves over cycles"));
  const torch::Tensor wv = twt::wave_set(rng, 5, 1.0f, true);
  TravelingWaves waves;
  double offset = 0.0;  // the cycle's phase_offset: += 0.1 a cycle, in double
  int64_t differing = 0;
  for (int cycle = 0; cycle < 3000; ++cycle, offset += 0.1) {
    if (cycle % 7 != 0) continue;
    const int64_t R = cycle % 2 == 0 ? 6 : 16;
    if (!twt::same_bits(waves.generate(wv, R, offset, 0.005),
                        traveling_waves_aten(wv, R, offset, 0.005)))
      ++differing;
  }
  INFO(differing << " wave fields differ");
  CHECK(differing == 0);
}

TEST_CASE("The traveling waves' result is not changed by the next call at another size",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("traveling waves buffers"));
  const torch::Tensor wv = twt::wave_set(rng, 5, 1.0f, true);
  TravelingWaves waves;
  const torch::Tensor first = waves.generate(wv, 8, 0.3, 0.005).clone();
  waves.generate(wv, 5, 0.3, 0.005);
  CHECK(twt::same_bits(waves.generate(wv, 8, 0.3, 0.005), first));
  CHECK(twt::same_bits(first, traveling_waves_aten(wv, 8, 0.3, 0.005)));
}
