// Argument checks of fieldbrain::spontaneous_wave_out (brain/ops/spontaneous_wave.h): what its
// kernels on every device take.
#include "brain/ops/spontaneous_wave.h"

#include "brain/ops/arg_check.h"

namespace fieldbrain {
namespace ops {

SpontaneousWaveArgs SpontaneousWaveOut::prepare(c10::DeviceType device,
                                                const at::Tensor& wave_vectors,
                                                const at::Tensor& wave_mask,
                                                const at::Tensor& phase, at::Tensor& wave) {
  ArgCheck check("fieldbrain::spontaneous_wave_out", device);
  check.dims("wave", wave, 4, "[B,R,R,R]");
  const int64_t B = wave.size(0), R = wave.size(1);
  // The CUDA kernel indexes a robot's wave with 32-bit ints: R^3 must stay below 2^31.
  TORCH_CHECK(R <= 1024, check.op(), ": R must be <= 1024, got ", R);
  check("wave", wave, {B, R, R, R}, at::kFloat, ArgLayout::kContiguous, "[B,R,R,R]");
  check("wave_vectors", wave_vectors, {B, wave::kMaxWaves, 3}, at::kFloat,
        ArgLayout::kContiguous, "[B,5,3]");
  check("wave_mask", wave_mask, {B, wave::kMaxWaves}, at::kFloat, ArgLayout::kContiguous,
        "[B,5]");
  // The phase may be strided: a column of the value table.
  check("phase", phase, {B}, at::kFloat, ArgLayout::kStrided, "[B]");
  SpontaneousWaveArgs a;
  a.wave_vectors = wave_vectors.data_ptr<float>();
  a.wave_mask = wave_mask.data_ptr<float>();
  a.phase = phase.data_ptr<float>();
  a.phase_stride = phase.stride(0);
  a.wave = wave.data_ptr<float>();
  a.batch = B;
  a.resolution = R;
  return a;
}

}  // namespace ops
}  // namespace fieldbrain
