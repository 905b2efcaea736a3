// Argument checks of fieldbrain::attractor_record_ / attractor_pull_
// (brain/ops/attractor_pull.h): what their kernels on every device take.
#include "brain/ops/attractor_pull.h"

#include "brain/ops/arg_check.h"

namespace fieldbrain {
namespace ops {
namespace {

struct AttractorShape {
  int64_t batch, slots, resolution;
};

// field [B,64,R,R,R] and bank [B,A,64,R,R,R], contiguous float32, the same B and R.
AttractorShape check_field_and_bank(ArgCheck& check, const at::Tensor& field,
                                    const at::Tensor& bank) {
  check.dims("field", field, 5, "[B,64,R,R,R]");
  const int64_t B = field.size(0), R = field.size(2);
  TORCH_CHECK(R <= 1024, check.op(), ": R must be <= 1024, got ", R);
  check("field", field, {B, 64, R, R, R}, at::kFloat, ArgLayout::kContiguous, "[B,64,R,R,R]");
  check.dims("bank", bank, 6, "[B,A,64,R,R,R]");
  TORCH_CHECK(bank.size(1) >= 1, check.op(), ": bank must hold at least one slot");
  check("bank", bank, {B, bank.size(1), 64, R, R, R}, at::kFloat, ArgLayout::kContiguous,
        "[B,A,64,R,R,R] matching the field");
  return {B, bank.size(1), R};
}

}  // namespace

AttractorRecordArgs AttractorRecord::prepare(c10::DeviceType device, at::Tensor& bank,
                                             const at::Tensor& field, const at::Tensor& slot) {
  ArgCheck check("fieldbrain::attractor_record_", device);
  const auto shape = check_field_and_bank(check, field, bank);
  // The slot may be strided: a column of the fact table.
  check("slot", slot, {shape.batch}, at::kLong, ArgLayout::kStrided, "[B]");
  AttractorRecordArgs a;
  a.bank = bank.data_ptr<float>();
  a.field = field.data_ptr<float>();
  a.slot = slot.data_ptr<int64_t>();
  a.slot_stride = slot.stride(0);
  a.batch = shape.batch;
  a.slots = shape.slots;
  a.resolution = shape.resolution;
  return a;
}

AttractorPullArgs AttractorPull::prepare(c10::DeviceType device, at::Tensor& field,
                                         const at::Tensor& next, at::Tensor& bank,
                                         at::Tensor& shadow, at::Tensor& shadow_scale,
                                         const at::Tensor& weights, at::Tensor& workspace,
                                         const at::Tensor& source, const at::Tensor& slot) {
  ArgCheck check("fieldbrain::attractor_pull_", device);
  const auto shape = check_field_and_bank(check, field, bank);
  check("weights", weights, {shape.batch, shape.slots, kAttractorWeightColumns});
  check("workspace", workspace,
        {shape.batch, attractor_workspace_width(static_cast<int>(shape.slots))}, at::kDouble);
  const int64_t R = shape.resolution;
  check("next", next, {shape.batch, 64, R, R, R}, at::kFloat, ArgLayout::kContiguous,
        "[B,64,R,R,R] matching the field");
  check("shadow", shadow, {shape.batch, shape.slots, 64, R, R, R}, at::kShort,
        ArgLayout::kContiguous, "[B,A,64,R,R,R] matching the bank");
  check("shadow_scale", shadow_scale, {shape.batch, shape.slots, 64}, at::kFloat,
        ArgLayout::kContiguous, "[B,A,64] matching the bank");
  check("source", source, {shape.batch, 64, R, R, R}, at::kFloat, ArgLayout::kContiguous,
        "[B,64,R,R,R] matching the field");
  check("slot", slot, {shape.batch}, at::kLong, ArgLayout::kStrided, "[B]");
  AttractorPullArgs a;
  a.field = field.data_ptr<float>();
  a.next = next.data_ptr<float>();
  a.bank = bank.data_ptr<float>();
  a.shadow = shadow.data_ptr<int16_t>();
  a.shadow_scale = shadow_scale.data_ptr<float>();
  a.source = source.data_ptr<float>();
  a.slot = slot.data_ptr<int64_t>();
  a.slot_stride = slot.stride(0);
  a.weights = weights.data_ptr<float>();
  a.workspace = workspace.data_ptr<double>();
  a.batch = shape.batch;
  a.slots = shape.slots;
  a.resolution = shape.resolution;
  return a;
}

}  // namespace ops
}  // namespace fieldbrain
