// Argument checks of fieldbrain::field_readout_out (brain/ops/field_readout.h), what its
// kernels on every device take, and the result of the allocating field_readout.
#include "brain/ops/field_readout.h"

#include <ATen/MemoryOverlap.h>
#include <ATen/ops/empty.h>

#include "brain/ops/arg_check.h"

namespace fieldbrain {
namespace ops {
namespace {

// field must be [B,64,R,R,R] float32 on a device of type `device`, 4 <= R <= 1024; returns {B, R}.
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

}  // namespace

FieldReadoutOut::Prepared FieldReadoutOut::prepare(c10::DeviceType device, const at::Tensor& field,
                                                   at::Tensor& out) {
  const auto [B, R] = check_field_readout_field(field, device);
  Prepared p;
  p.field_copy = field.contiguous();  // copies only a non-contiguous field
  prepare_field_readout_out(out, p.field_copy);
  p.field = p.field_copy.data_ptr<float>();
  p.out = out.data_ptr<float>();
  p.batch = B;
  p.resolution = R;
  return p;
}

// field_readout is a composite over field_readout_out, registered once for every device (as
// field_step's allocating variants are); the field is checked before it sizes the result.
at::Tensor FieldReadout::empty_result(const at::Tensor& field) {
  TORCH_CHECK(field.defined(), "fieldbrain::field_readout: field is undefined");
  const int64_t B = check_field_readout_field(field, field.device().type()).first;
  return at::empty({B, kReadoutWidth}, field.options());
}

}  // namespace ops
}  // namespace fieldbrain
