// EvolvedFieldDynamics._generate_traveling_waves without its ~90 small ATen calls a cycle: the
// [R,R,R] wave field sum_w sin(phase_w) * amplitude, then * 0.1, with
// phase_w = phase_offset + wave_w[0] * x / 3.0 + wave_w[1] * y / 3.0 + wave_w[2] * z / 3.0.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace fieldbrain::legacy {

// The original's expression written with ATen calls, as the port wrote it: the reference the
// loops below are held against (tests, start-up probe) and their fallback. wave_vectors is
// [n_waves, 3] float32.
torch::Tensor traveling_waves_aten(const torch::Tensor& wave_vectors, int64_t R,
                                   double phase_offset, double amplitude);

// The same floats from loops: every phase is float32 products, quotients and sums in the
// expression's order (each an IEEE float operation: one rounding whatever the kernel), written
// into a contiguous [R,R,R] buffer and handed to ATen's own sin (sin_out, the same layout the
// expression gives it, so each value goes through the same lane of the same kernel); the sines'
// scaling and sum are float operations again. Probed once per process against
// traveling_waves_aten; where one bit differs, it calls traveling_waves_aten. The buffers are
// this object's, reused while R stays the same (nothing allocated in steady state).
class TravelingWaves {
 public:
  // The wave field, valid until the next call.
  const torch::Tensor& generate(const torch::Tensor& wave_vectors, int64_t R, double phase_offset,
                                double amplitude);

  // Whether generate takes the loops in this process; exposed for the tests.
  static bool exact_available();

 private:
  static bool probe();  // loops against traveling_waves_aten on a few wave sets and sizes
  const torch::Tensor& loops(const torch::Tensor& wave_vectors, int64_t R, double phase_offset,
                             double amplitude);
  torch::Tensor waves_, phase_, sines_;
  std::vector<float> along_;  // [3][R]: wave_vec[i] * coord / 3.0 per axis, for the wave at hand
};

}  // namespace fieldbrain::legacy
