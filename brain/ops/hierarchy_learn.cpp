// Argument checks of fieldbrain::hierarchy_observe_, hierarchy_apply_ and error_field_update_
// (brain/ops/hierarchy_learn.h): what their kernels on every device take.
#include "brain/ops/hierarchy_learn.h"

#include "brain/ops/arg_check.h"
#include "brain/ops/hierarchy_learn_math.h"

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

HierarchyObserveArgs HierarchyObserve::prepare(c10::DeviceType device, const at::Tensor& field,
                                               const at::Tensor& sensors, const at::Tensor& facts,
                                               const at::Tensor& hpred, const at::Tensor& hist,
                                               const at::Tensor& herr0, const at::Tensor& herr1,
                                               const at::Tensor& herr2, const at::Tensor& herr3,
                                               const at::Tensor& W, const at::Tensor& pending) {
  const at::Tensor* herr[4] = {&herr0, &herr1, &herr2, &herr3};
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
  for (int k = 0; k < 4; ++k) check(names[k], *herr[k], {B, h::kHerrCapacity});
  check("W", W, {B, h::kTimescales, h::kSites, S});
  check("pending", pending, {B, h::pending_width(S)});
  HierarchyObserveArgs a;
  a.field = field.data_ptr<float>();
  a.sensors = sensors.data_ptr<float>();
  a.facts = facts.data_ptr<int64_t>();
  a.hpred = hpred.data_ptr<float>();
  a.hist = hist.data_ptr<float>();
  for (int k = 0; k < 4; ++k) a.herr[k] = herr[k]->data_ptr<float>();
  a.W = W.data_ptr<float>();
  a.pending = pending.data_ptr<float>();
  a.batch = B;
  a.sensory_dim = S;
  a.resolution = field.size(2);
  return a;
}

HierarchyApplyArgs HierarchyApply::prepare(c10::DeviceType device, const at::Tensor& field,
                                           const at::Tensor& pending) {
  ArgCheck check("fieldbrain::hierarchy_apply_", device);
  check.dims("pending", pending, 2, "[B, pending_width(S)]");
  TORCH_CHECK(pending.size(1) >= h::pending_width(1) &&
                  (pending.size(1) - h::kPendingTargets) % 4 == 0,
              check.op(), ": pending must have shape [B, pending_width(S)], got ",
              shape_text(pending.sizes()));
  const int64_t B = pending.size(0);
  check("pending", pending, {B, pending.size(1)});
  const int64_t R = check_learn_field(check, field, B);
  HierarchyApplyArgs a;
  a.field = field.data_ptr<float>();
  a.pending = pending.data_ptr<float>();
  a.batch = B;
  a.resolution = R;
  a.pending_width = pending.size(1);
  return a;
}

ErrorFieldArgs ErrorFieldUpdate::prepare(c10::DeviceType device, const at::Tensor& e,
                                         const at::Tensor& facts, const at::Tensor& ef,
                                         const at::Tensor& has_ef, const at::Tensor& boost) {
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
  ErrorFieldArgs a;
  a.e = e.data_ptr<float>();
  a.facts = facts.data_ptr<int64_t>();
  a.ef = ef.data_ptr<float>();
  a.has_ef = has_ef.data_ptr<float>();
  a.boost = boost.data_ptr<float>();
  a.batch = B;
  a.sensory_dim = e.size(1);
  a.resolution = R;
  return a;
}

}  // namespace ops
}  // namespace fieldbrain
