// Schema of fieldbrain::spontaneous_wave_out (torchvision layout: schema here, one kernel file
// per device under cpu/ and cuda/), its argument checks and the C++ entry point of
// brain/ops/spontaneous_wave.h.
#include "brain/ops/spontaneous_wave.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

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
  const char* op = "fieldbrain::spontaneous_wave_out";
  for (const auto* t : {&wave_vectors, &wave_mask, &phase, &wave}) {
    TORCH_CHECK(t->defined(), op, ": an argument is undefined");
  }
  TORCH_CHECK(wave.dim() == 4 && wave.size(1) == wave.size(2) && wave.size(1) == wave.size(3),
              op, ": wave must have shape [B,R,R,R], got ", wave.sizes());
  const int64_t B = wave.size(0), R = wave.size(1);
  // The CUDA kernel indexes a robot's wave with 32-bit ints: R^3 must stay below 2^31.
  TORCH_CHECK(R <= 1024, op, ": R must be <= 1024, got ", R);
  TORCH_CHECK(wave_vectors.sizes() == at::IntArrayRef({B, wave::kMaxWaves, 3}), op,
              ": wave_vectors must have shape [B,5,3] = [", B, ",5,3], got ",
              wave_vectors.sizes());
  TORCH_CHECK(wave_mask.sizes() == at::IntArrayRef({B, wave::kMaxWaves}), op,
              ": wave_mask must have shape [B,5] = [", B, ",5], got ", wave_mask.sizes());
  TORCH_CHECK(phase.dim() == 1 && phase.size(0) == B, op, ": phase must have shape [B] = [", B,
              "], got ", phase.sizes());
  const std::pair<const at::Tensor*, const char*> named[] = {
      {&wave_vectors, "wave_vectors"}, {&wave_mask, "wave_mask"}, {&phase, "phase"}, {&wave, "wave"}};
  for (const auto& [t, name] : named) {
    TORCH_CHECK(t->scalar_type() == at::kFloat, op, ": ", name, " must be float32, got ",
                t->scalar_type());
    TORCH_CHECK(t->device().type() == device && t->device() == wave.device(), op, ": ", name,
                " must be on ", wave.device(), " (", c10::DeviceTypeName(device),
                " kernel), got ", t->device());
    // No hidden copies: only the phase may be strided (a column of the value table).
    TORCH_CHECK(t == &phase || t->is_contiguous(), op, ": ", name, " must be contiguous");
  }
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
