// Schemas of fieldbrain::hierarchy_observe_, hierarchy_apply_ and error_field_update_
// (torchvision layout: schema here, one kernel file per device under cpu/ and cuda/), their
// argument checks and the C++ entry points of brain/ops/hierarchy_learn.h.
#include "brain/ops/hierarchy_learn.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "brain/ops/arg_check.h"
#include "brain/ops/hierarchy_learn_math.h"

TORCH_LIBRARY_FRAGMENT(fieldbrain, m) {
  m.def(
      "hierarchy_observe_(Tensor field, Tensor sensors, Tensor facts, Tensor hpred, "
      "Tensor(a!) hist, Tensor(b!) herr0, Tensor(c!) herr1, Tensor(d!) herr2, Tensor(e!) herr3, "
      "Tensor(f!) W, Tensor(g!) pending) -> ()");
  m.def("hierarchy_apply_(Tensor(a!) field, Tensor pending) -> ()");
  m.def(
      "error_field_update_(Tensor e, Tensor facts, Tensor(a!) ef, Tensor(b!) has_ef, "
      "Tensor(c!) boost) -> ()");
}

namespace fieldbrain {
namespace ops {
namespace {

namespace h = hierarchy;

// R of a field [B,64,R,R,R] of `batch` robots (4 <= R <= 1024: 32-bit voxel indices on CUDA).
int64_t check_learn_field(ArgCheck& check, const at::Tensor& field, int64_t batch) {
  check.dims("field", field, 5, "[B,64,R,R,R]");
  const int64_t R = field.size(2);
  TORCH_CHECK(R >= 4 && R <= 1024, check.op(), ": field must have 4 <= R <= 1024, got ", R);
  check("field", field, {batch, h::kChannels, R, R, R}, at::kFloat, ArgLayout::kContiguous,
        "[B,64,R,R,R]");
  return R;
}

}  // namespace

std::pair<int64_t, int64_t> check_hierarchy_observe_args(
    const at::Tensor& field, const at::Tensor& sensors, const at::Tensor& facts,
    const at::Tensor& hpred, const at::Tensor& hist, const at::Tensor* herr, const at::Tensor& W,
    const at::Tensor& pending, c10::DeviceType device) {
  ArgCheck check("fieldbrain::hierarchy_observe_", device);
  check.dims("sensors", sensors, 2, "[B,S]");
  const int64_t B = sensors.size(0), S = sensors.size(1);
  TORCH_CHECK(S >= 1, check.op(), ": sensors must have shape [B,S] with S >= 1");
  check("sensors", sensors, {B, S});
  check_learn_field(check, field, B);
  check("facts", facts, {B, kFactColumns}, at::kLong);
  check("hpred", hpred, {B, h::kTimescales, S});
  check("hist", hist, {B, h::kHistCapacity, S});
  const char* names[4] = {"herr0", "herr1", "herr2", "herr3"};
  for (int k = 0; k < 4; ++k) check(names[k], herr[k], {B, h::kHerrCapacity});
  check("W", W, {B, h::kTimescales, h::kSites, S});
  check("pending", pending, {B, h::pending_width(S)});
  return {B, S};
}

std::pair<int64_t, int64_t> check_hierarchy_apply_args(const at::Tensor& field,
                                                       const at::Tensor& pending,
                                                       c10::DeviceType device) {
  ArgCheck check("fieldbrain::hierarchy_apply_", device);
  check.dims("pending", pending, 2, "[B, pending_width(S)]");
  TORCH_CHECK(pending.size(1) >= h::pending_width(1) &&
                  (pending.size(1) - h::kPendingTargets) % 4 == 0,
              check.op(), ": pending must have shape [B, pending_width(S)], got ",
              shape_text(pending.sizes()));
  const int64_t B = pending.size(0);
  check("pending", pending, {B, pending.size(1)});
  const int64_t R = check_learn_field(check, field, B);
  return {B, R};
}

std::pair<int64_t, int64_t> check_error_field_args(const at::Tensor& e, const at::Tensor& facts,
                                                   const at::Tensor& ef, const at::Tensor& has_ef,
                                                   const at::Tensor& boost, c10::DeviceType device) {
  ArgCheck check("fieldbrain::error_field_update_", device);
  check.dims("e", e, 2, "[B,S]");
  const int64_t B = e.size(0);
  TORCH_CHECK(e.size(1) >= 1, check.op(), ": e must have shape [B,S] with S >= 1");
  check("e", e, {B, e.size(1)});
  check("facts", facts, {B, kFactColumns}, at::kLong);
  check.dims("ef", ef, 4, "[B,R,R,R]");
  const int64_t R = ef.size(1);
  TORCH_CHECK(R >= 4 && R <= 1024, check.op(), ": ef must have 4 <= R <= 1024, got ", R);
  check("ef", ef, {B, R, R, R});
  check("has_ef", has_ef, {B});
  check("boost", boost, {B});
  return {B, R};
}

void hierarchy_observe_(const at::Tensor& field, const at::Tensor& sensors, const at::Tensor& facts,
                        const at::Tensor& hpred, const at::Tensor& hist, const at::Tensor& herr0,
                        const at::Tensor& herr1, const at::Tensor& herr2, const at::Tensor& herr3,
                        const at::Tensor& W, const at::Tensor& pending) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("fieldbrain::hierarchy_observe_", "")
          .typed<void(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                      const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                      const at::Tensor&, const at::Tensor&, const at::Tensor&)>();
  op.call(field, sensors, facts, hpred, hist, herr0, herr1, herr2, herr3, W, pending);
}

void hierarchy_apply_(const at::Tensor& field, const at::Tensor& pending) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("fieldbrain::hierarchy_apply_", "")
                             .typed<void(const at::Tensor&, const at::Tensor&)>();
  op.call(field, pending);
}

void error_field_update_(const at::Tensor& e, const at::Tensor& facts, const at::Tensor& ef,
                         const at::Tensor& has_ef, const at::Tensor& boost) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("fieldbrain::error_field_update_", "")
          .typed<void(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                      const at::Tensor&)>();
  op.call(e, facts, ef, has_ef, boost);
}

}  // namespace ops
}  // namespace fieldbrain
