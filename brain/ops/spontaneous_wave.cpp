// Schema of fieldbrain::spontaneous_wave_out (torchvision layout: schema here, one kernel file
// per device under cpu/ and cuda/), its argument checks and the C++ entry point of
// brain/ops/spontaneous_wave.h.
#include "brain/ops/spontaneous_wave.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "brain/ops/arg_check.h"
#include "brain/ops/spontaneous_wave_math.h"

TORCH_LIBRARY_FRAGMENT(fieldbrain, m) {
  m.def(
      "spontaneous_wave_out(Tensor wave_vectors, Tensor wave_mask, Tensor phase, "
      "Tensor(a!) wave) -> ()");
}

namespace fieldbrain {
namespace ops {

std::pair<int64_t, int64_t> check_spontaneous_wave_args(const at::Tensor& wave_vectors,
                                                        const at::Tensor& wave_mask,
                                                        const at::Tensor& phase,
                                                        const at::Tensor& wave,
                                                        c10::DeviceType device) {
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
  return {B, R};
}

void spontaneous_wave_out(const at::Tensor& wave_vectors, const at::Tensor& wave_mask,
                          const at::Tensor& phase, at::Tensor& wave) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("fieldbrain::spontaneous_wave_out", "")
                             .typed<void(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                         at::Tensor&)>();
  op.call(wave_vectors, wave_mask, phase, wave);
}

}  // namespace ops
}  // namespace fieldbrain
