// Schema of fieldbrain::field_readout (torchvision layout: schema here, one kernel file per
// device under cpu/ and cuda/), its argument checks and the C++ entry points of
// brain/ops/field_readout.h.
#include "brain/ops/field_readout.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

TORCH_LIBRARY_FRAGMENT(fieldbrain, m) {
  m.def("field_readout(Tensor field) -> Tensor");
  m.def("field_readout_out(Tensor field, Tensor(a!) out) -> Tensor(a!)");
  m.def("field_readout_cpu_isa() -> str", [] { return fieldbrain::ops::field_readout_cpu_isa(); });
}

namespace fieldbrain {
namespace ops {

std::pair<int64_t, int64_t> check_field_readout_field(const at::Tensor& field,
                                                      c10::DeviceType device) {
  TORCH_CHECK(field.defined(), "fieldbrain::field_readout: field is undefined");
  TORCH_CHECK(field.dim() == 5 && field.size(1) == kReadoutChannels &&
                  field.size(2) == field.size(3) && field.size(2) == field.size(4) &&
                  field.size(2) >= 4,
              "fieldbrain::field_readout: field must have shape [B,64,R,R,R] with R >= 4, got ",
              field.sizes());
  // The CUDA kernel indexes a channel with 32-bit ints: R^3 must stay below 2^31.
  TORCH_CHECK(field.size(2) <= 1024, "fieldbrain::field_readout: R must be <= 1024, got ",
              field.size(2));
  TORCH_CHECK(field.scalar_type() == at::kFloat,
              "fieldbrain::field_readout: field must be float32, got ", field.scalar_type());
  TORCH_CHECK(field.device().type() == device, "fieldbrain::field_readout: field must be on ",
              c10::DeviceTypeName(device), " for this kernel, got ", field.device());
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
