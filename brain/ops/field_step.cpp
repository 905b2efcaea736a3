// Schemas of fieldbrain::field_step, field_step_seeded and philox_normal_out (torchvision
// layout: schema here, one kernel file per device under cpu/ and cuda/), the allocating
// variants for every device at once, and the C++ entry points of brain/ops/field_step.h.
#include "brain/ops/field_step.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "brain/ops/field_step_checks.h"

TORCH_LIBRARY(fieldbrain, m) {
  m.def(
      "field_step(Tensor field, Tensor noise, Tensor wave, Tensor ef, Tensor scalars) -> Tensor");
  m.def(
      "field_step_out(Tensor field, Tensor noise, Tensor wave, Tensor ef, Tensor scalars, "
      "Tensor(a!) out) -> Tensor(a!)");
  // The same step with the spontaneous-activity noise made inside the kernel from the
  // robots' (seed, cycle) (brain/ops/philox.h, stream kStreamSpontaneous): no noise tensor.
  m.def(
      "field_step_seeded(Tensor field, Tensor noise_key, Tensor wave, Tensor ef, Tensor scalars) "
      "-> Tensor");
  m.def(
      "field_step_seeded_out(Tensor field, Tensor noise_key, Tensor wave, Tensor ef, "
      "Tensor scalars, Tensor(a!) out) -> Tensor(a!)");
  // Standard normals of a Philox stream into out [B, ...]: element i of robot b is
  // philox::normal(noise_key[b,0], noise_key[b,1], stream, i) (brain/ops/philox_normal.h).
  m.def("philox_normal_out(Tensor noise_key, int stream, Tensor(a!) out) -> Tensor(a!)");
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

at::Tensor field_step_seeded(const at::Tensor& field, const at::Tensor& noise_key,
                             const at::Tensor& wave, const at::Tensor& ef,
                             const at::Tensor& scalars) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("fieldbrain::field_step_seeded", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                            const at::Tensor&, const at::Tensor&)>();
  return op.call(field, noise_key, wave, ef, scalars);
}

at::Tensor& field_step_seeded_out(const at::Tensor& field, const at::Tensor& noise_key,
                                  const at::Tensor& wave, const at::Tensor& ef,
                                  const at::Tensor& scalars, at::Tensor& out) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("fieldbrain::field_step_seeded_out", "")
          .typed<at::Tensor&(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                             const at::Tensor&, const at::Tensor&, at::Tensor&)>();
  return op.call(field, noise_key, wave, ef, scalars, out);
}

namespace {

// The allocating variants are composites over the _out kernels, registered once for every
// device (CompositeExplicitAutograd): a device gets them by registering its _out kernels. The
// arguments are checked before `out` is sized from them (one allocation: the result).
at::Tensor field_step_alloc(const at::Tensor& field, const at::Tensor& noise,
                            const at::Tensor& wave, const at::Tensor& ef,
                            const at::Tensor& scalars) {
  TORCH_CHECK(field.defined(), "fieldbrain::field_step: field is undefined");
  check_field_step_args(field, noise, wave, ef, scalars, field.device().type());
  at::Tensor out = at::empty(field.sizes(), field.options());
  return field_step_out(field, noise, wave, ef, scalars, out);
}

at::Tensor field_step_seeded_alloc(const at::Tensor& field, const at::Tensor& noise_key,
                                   const at::Tensor& wave, const at::Tensor& ef,
                                   const at::Tensor& scalars) {
  TORCH_CHECK(field.defined(), "fieldbrain::field_step_seeded: field is undefined");
  check_field_step_seeded_args(field, noise_key, wave, ef, scalars, field.device().type());
  at::Tensor out = at::empty(field.sizes(), field.options());
  return field_step_seeded_out(field, noise_key, wave, ef, scalars, out);
}

}  // namespace

at::Tensor& philox_normal_out(const at::Tensor& noise_key, int64_t stream, at::Tensor& out) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("fieldbrain::philox_normal_out", "")
                             .typed<at::Tensor&(const at::Tensor&, int64_t, at::Tensor&)>();
  return op.call(noise_key, stream, out);
}

}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CompositeExplicitAutograd, m) {
  m.impl("field_step", TORCH_FN(fieldbrain::ops::field_step_alloc));
  m.impl("field_step_seeded", TORCH_FN(fieldbrain::ops::field_step_seeded_alloc));
}
