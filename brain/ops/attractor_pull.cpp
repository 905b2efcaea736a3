// Schema of fieldbrain::attractor_record_ / attractor_pull_ (torchvision layout: schema here,
// one kernel file per device under cpu/ and cuda/), their argument checks and C++ entry points.
#include "brain/ops/attractor_pull.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "brain/ops/arg_check.h"
#include "brain/ops/attractor_math.h"

TORCH_LIBRARY_FRAGMENT(fieldbrain, m) {
  m.def("attractor_record_(Tensor(a!) bank, Tensor field, Tensor slot) -> ()");
  m.def("attractor_pull_(Tensor(a!) field, Tensor bank, Tensor weights, Tensor(b!) workspace) -> ()");
}

namespace fieldbrain {
namespace ops {
namespace {

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

AttractorShape check_attractor_record_args(const at::Tensor& bank, const at::Tensor& field,
                                           const at::Tensor& slot, c10::DeviceType device) {
  ArgCheck check("fieldbrain::attractor_record_", device);
  const auto shape = check_field_and_bank(check, field, bank);
  // The slot may be strided: a column of the fact table.
  check("slot", slot, {shape.batch}, at::kLong, ArgLayout::kStrided, "[B]");
  return shape;
}

AttractorShape check_attractor_pull_args(const at::Tensor& field, const at::Tensor& bank,
                                         const at::Tensor& weights, const at::Tensor& workspace,
                                         c10::DeviceType device) {
  ArgCheck check("fieldbrain::attractor_pull_", device);
  const auto shape = check_field_and_bank(check, field, bank);
  check("weights", weights, {shape.batch, shape.slots, kAttractorWeightColumns});
  check("workspace", workspace,
        {shape.batch, attractor_workspace_width(static_cast<int>(shape.slots))}, at::kDouble);
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
