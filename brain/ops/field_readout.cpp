// Schema of fieldbrain::field_readout (torchvision layout: schema here, one kernel file per
// device under cpu/ and cuda/), its argument checks, the allocating variant for every device at
// once, and the C++ entry points of brain/ops/field_readout.h.
#include "brain/ops/field_readout.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include "brain/ops/arg_check.h"

TORCH_LIBRARY_FRAGMENT(fieldbrain, m) {
  m.def("field_readout(Tensor field) -> Tensor");
  m.def("field_readout_out(Tensor field, Tensor(a!) out) -> Tensor(a!)");
  m.def("field_readout_cpu_isa() -> str", [] { return fieldbrain::ops::field_readout_cpu_isa(); });
}

namespace fieldbrain {
namespace ops {

std::pair<int64_t, int64_t> check_field_readout_field(const at::Tensor& field,
                                                      c10::DeviceType device) {
  ArgCheck check("fieldbrain::field_readout", device);
  check.dims("field", field, 5, "[B,64,R,R,R]");
  const int64_t B = field.size(0), R = field.size(2);
  TORCH_CHECK(R >= 4, check.op(), ": field must have shape [B,64,R,R,R] with R >= 4, got ",
              shape_text(field.sizes()));
  // The CUDA kernel indexes a channel with 32-bit ints: R^3 must stay below 2^31.
  TORCH_CHECK(R <= 1024, check.op(), ": R must be <= 1024, got ", R);
  // A non-contiguous field is copied (field_readout.h, "Memory").
  check("field", field, {B, kReadoutChannels, R, R, R}, at::kFloat, ArgLayout::kStrided,
        "[B,64,R,R,R]");
  return {field.size(0), field.size(2)};
}

void prepare_field_readout_out(at::Tensor& out, const at::Tensor& field) {
  TORCH_CHECK(out.defined() && out.device() == field.device() && out.scalar_type() == at::kFloat,
              "fieldbrain::field_readout_out: out must be a float32 tensor on ", field.device(),
              ", got ",
              out.defined() ? c10::str(out.scalar_type(), " on ", out.device()) : "undefined");
  const std::vector<int64_t> shape{field.size(0), kReadoutWidth};
  if (out.sizes() != at::IntArrayRef(shape)) out.resize_(shape);
  TORCH_CHECK(out.is_contiguous(), "fieldbrain::field_readout_out: out must be contiguous");
  at::assert_no_overlap(out, field);
}

namespace {

// field_readout is a composite over field_readout_out, registered once for every device (as
// field_step's allocating variants are); the field is checked before it sizes the result.
at::Tensor field_readout_alloc(const at::Tensor& field) {
  TORCH_CHECK(field.defined(), "fieldbrain::field_readout: field is undefined");
  const int64_t B = check_field_readout_field(field, field.device().type()).first;
  at::Tensor out = at::empty({B, kReadoutWidth}, field.options());
  return field_readout_out(field, out);
}

}  // namespace

at::Tensor field_readout(const at::Tensor& field) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("fieldbrain::field_readout", "")
                             .typed<at::Tensor(const at::Tensor&)>();
  return op.call(field);
}

at::Tensor& field_readout_out(const at::Tensor& field, at::Tensor& out) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("fieldbrain::field_readout_out", "")
                             .typed<at::Tensor&(const at::Tensor&, at::Tensor&)>();
  return op.call(field, out);
}

}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CompositeExplicitAutograd, m) {
  m.impl("field_readout", TORCH_FN(fieldbrain::ops::field_readout_alloc));
}
