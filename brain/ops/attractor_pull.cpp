// Schema of fieldbrain::attractor_record_ / attractor_pull_ (torchvision layout: schema here,
// one kernel file per device under cpu/ and cuda/), their argument checks and C++ entry points.
#include "brain/ops/attractor_pull.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "brain/ops/attractor_math.h"

TORCH_LIBRARY_FRAGMENT(fieldbrain, m) {
  m.def("attractor_record_(Tensor(a!) bank, Tensor field, Tensor slot) -> ()");
  m.def("attractor_pull_(Tensor(a!) field, Tensor bank, Tensor weights, Tensor(b!) workspace) -> ()");
}

namespace fieldbrain {
namespace ops {
namespace {

void check_on(const at::Tensor& t, const char* op, const char* name, c10::DeviceType device) {
  TORCH_CHECK(t.defined(), "fieldbrain::", op, ": ", name, " is undefined");
  TORCH_CHECK(t.device().type() == device, "fieldbrain::", op, ": ", name, " must be on ",
              c10::DeviceTypeName(device), " for this kernel, got ", t.device());
}

// field [B,64,R,R,R] and bank [B,A,64,R,R,R], contiguous float32, the same B and R.
AttractorShape check_field_and_bank(const char* op, const at::Tensor& field, const at::Tensor& bank,
                                    c10::DeviceType device) {
  check_on(field, op, "field", device);
  check_on(bank, op, "bank", device);
  TORCH_CHECK(field.dim() == 5 && field.size(1) == 64 && field.size(2) == field.size(3) &&
                  field.size(2) == field.size(4),
              "fieldbrain::", op, ": field must have shape [B,64,R,R,R], got ", field.sizes());
  const int64_t B = field.size(0), R = field.size(2);
  TORCH_CHECK(bank.dim() == 6 && bank.size(0) == B && bank.size(1) >= 1 && bank.size(2) == 64 &&
                  bank.size(3) == R && bank.size(4) == R && bank.size(5) == R,
              "fieldbrain::", op, ": bank must have shape [B,A,64,R,R,R] matching the field ", field.sizes(),
              ", got ", bank.sizes());
  TORCH_CHECK(field.scalar_type() == at::kFloat && bank.scalar_type() == at::kFloat,
              "fieldbrain::", op, ": field and bank must be float32");
  TORCH_CHECK(field.is_contiguous() && bank.is_contiguous(), "fieldbrain::", op,
              ": field and bank must be contiguous (the operator copies nothing)");
  TORCH_CHECK(R <= 1024, "fieldbrain::", op, ": R must be <= 1024, got ", R);
  return {B, bank.size(1), R};
}

}  // namespace

AttractorShape check_attractor_record_args(const at::Tensor& bank, const at::Tensor& field,
                                           const at::Tensor& slot, c10::DeviceType device) {
  const auto shape = check_field_and_bank("attractor_record_", field, bank, device);
  check_on(slot, "attractor_record_", "slot", device);
  TORCH_CHECK(slot.dim() == 1 && slot.size(0) == shape.batch && slot.scalar_type() == at::kLong,
              "fieldbrain::attractor_record_: slot must be int64 [", shape.batch, "], got ",
              slot.scalar_type(), " ", slot.sizes());
  return shape;
}

AttractorShape check_attractor_pull_args(const at::Tensor& field, const at::Tensor& bank,
                                         const at::Tensor& weights, const at::Tensor& workspace,
                                         c10::DeviceType device) {
  const auto shape = check_field_and_bank("attractor_pull_", field, bank, device);
  check_on(weights, "attractor_pull_", "weights", device);
  check_on(workspace, "attractor_pull_", "workspace", device);
  TORCH_CHECK(weights.scalar_type() == at::kFloat && weights.is_contiguous() &&
                  weights.sizes() == at::IntArrayRef({shape.batch, shape.slots, kAttractorWeightColumns}),
              "fieldbrain::attractor_pull_: weights must be contiguous float32 [", shape.batch, ",",
              shape.slots, ",", kAttractorWeightColumns, "], got ", weights.scalar_type(), " ",
              weights.sizes());
  const int64_t width = attractor_workspace_width(static_cast<int>(shape.slots));
  TORCH_CHECK(workspace.scalar_type() == at::kDouble && workspace.is_contiguous() &&
                  workspace.sizes() == at::IntArrayRef({shape.batch, width}),
              "fieldbrain::attractor_pull_: workspace must be contiguous float64 [", shape.batch, ",",
              width, "], got ", workspace.scalar_type(), " ", workspace.sizes());
  return shape;
}

void attractor_record_(at::Tensor& bank, const at::Tensor& field, const at::Tensor& slot) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("fieldbrain::attractor_record_", "")
                             .typed<void(at::Tensor&, const at::Tensor&, const at::Tensor&)>();
  op.call(bank, field, slot);
}

void attractor_pull_(at::Tensor& field, const at::Tensor& bank, const at::Tensor& weights,
                     at::Tensor& workspace) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("fieldbrain::attractor_pull_", "")
          .typed<void(at::Tensor&, const at::Tensor&, const at::Tensor&, at::Tensor&)>();
  op.call(field, bank, weights, workspace);
}

}  // namespace ops
}  // namespace fieldbrain
