// Schema of fieldbrain::field_step (torchvision layout: schema here, one kernel file per device
// under cpu/ and cuda/), and the C++ entry points of brain/ops/field_step.h.
#include "brain/ops/field_step.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

TORCH_LIBRARY(fieldbrain, m) {
  m.def(
      "field_step(Tensor field, Tensor noise, Tensor wave, Tensor ef, Tensor scalars) -> Tensor");
  m.def(
      "field_step_out(Tensor field, Tensor noise, Tensor wave, Tensor ef, Tensor scalars, "
      "Tensor(a!) out) -> Tensor(a!)");
  // Which instruction-set variant the CPU kernel runs (for benchmarks and tests).
  m.def("field_step_cpu_isa() -> str", [] { return fieldbrain::ops::field_step_cpu_isa(); });
}

namespace fieldbrain {
namespace ops {

at::Tensor field_step(const at::Tensor& field, const at::Tensor& noise, const at::Tensor& wave,
                      const at::Tensor& ef, const at::Tensor& scalars) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("fieldbrain::field_step", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                            const at::Tensor&, const at::Tensor&)>();
  return op.call(field, noise, wave, ef, scalars);
}

at::Tensor& field_step_out(const at::Tensor& field, const at::Tensor& noise,
                           const at::Tensor& wave, const at::Tensor& ef,
                           const at::Tensor& scalars, at::Tensor& out) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("fieldbrain::field_step_out", "")
          .typed<at::Tensor&(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                             const at::Tensor&, const at::Tensor&, at::Tensor&)>();
  return op.call(field, noise, wave, ef, scalars, out);
}

}  // namespace ops
}  // namespace fieldbrain
