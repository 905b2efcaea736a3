// Schemas of fieldbrain::hierarchy_observe_, hierarchy_apply_ and error_field_update_
// (torchvision layout: schema here, one kernel file per device under cpu/ and cuda/), their
// argument checks and the C++ entry points of brain/ops/hierarchy_learn.h.
#include "brain/ops/hierarchy_learn.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <vector>

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

// `t` must be a contiguous float32 (or `dtype`) tensor of exactly `shape` on a device of type
// `device` (and on `same` when given).
void check_learn_tensor(const char* op, const char* name, const at::Tensor& t,
                  const std::vector<int64_t>& shape, c10::DeviceType device,
                  const at::Tensor* same = nullptr, at::ScalarType dtype = at::kFloat) {
  TORCH_CHECK(t.defined(), op, ": ", name, " is undefined");
  TORCH_CHECK(t.sizes() == at::IntArrayRef(shape), op, ": ", name, " must have shape ",
              at::IntArrayRef(shape), ", got ", t.sizes());
  TORCH_CHECK(t.scalar_type() == dtype, op, ": ", name, " must be ", dtype, ", got ",
              t.scalar_type());
  TORCH_CHECK(t.device().type() == device, op, ": ", name, " must be on ",
              c10::DeviceTypeName(device), " for this kernel, got ", t.device());
  TORCH_CHECK(same == nullptr || t.device() == same->device(), op, ": ", name,
              " must be on the same device as the other arguments (", same->device(), "), got ",
              t.device());
  TORCH_CHECK(t.is_contiguous(), op, ": ", name, " must be contiguous (no copy is made)");
}

// R of a field [B,64,R,R,R] of `batch` robots (4 <= R <= 1024: 32-bit voxel indices on CUDA).
int64_t check_learn_field(const char* op, const char* name, const at::Tensor& field, int64_t batch,
                    c10::DeviceType device) {
  TORCH_CHECK(field.defined() && field.dim() == 5, op, ": ", name,
              " must have shape [B,64,R,R,R], got ",
              field.defined() ? c10::str(field.sizes()) : "undefined");
  const int64_t R = field.size(2);
  TORCH_CHECK(R >= 4 && R <= 1024, op, ": ", name, " must have 4 <= R <= 1024, got ", R);
  check_learn_tensor(op, name, field, {batch, h::kChannels, R, R, R}, device);
  return R;
}

}  // namespace

std::pair<int64_t, int64_t> check_hierarchy_observe_args(
    const at::Tensor& field, const at::Tensor& sensors, const at::Tensor& facts,
    const at::Tensor& hpred, const at::Tensor& hist, const at::Tensor* herr, const at::Tensor& W,
    const at::Tensor& pending, c10::DeviceType device) {
  constexpr const char* kOp = "fieldbrain::hierarchy_observe_";
  TORCH_CHECK(sensors.defined() && sensors.dim() == 2 && sensors.size(1) >= 1, kOp,
              ": sensors must have shape [B,S] with S >= 1, got ",
              sensors.defined() ? c10::str(sensors.sizes()) : "undefined");
  const int64_t B = sensors.size(0), S = sensors.size(1);
  check_learn_tensor(kOp, "sensors", sensors, {B, S}, device);
  check_learn_field(kOp, "field", field, B, device);
  check_learn_tensor(kOp, "field", field, field.sizes().vec(), device, &sensors);
  check_learn_tensor(kOp, "facts", facts, {B, kFactColumns}, device, &sensors, at::kLong);
  check_learn_tensor(kOp, "hpred", hpred, {B, h::kTimescales, S}, device, &sensors);
  check_learn_tensor(kOp, "hist", hist, {B, h::kHistCapacity, S}, device, &sensors);
  const char* names[4] = {"herr0", "herr1", "herr2", "herr3"};
  for (int k = 0; k < 4; ++k) check_learn_tensor(kOp, names[k], herr[k], {B, h::kHerrCapacity}, device, &sensors);
  check_learn_tensor(kOp, "W", W, {B, h::kTimescales, h::kSites, S}, device, &sensors);
  check_learn_tensor(kOp, "pending", pending, {B, h::pending_width(S)}, device, &sensors);
  return {B, S};
}

std::pair<int64_t, int64_t> check_hierarchy_apply_args(const at::Tensor& field,
                                                       const at::Tensor& pending,
                                                       c10::DeviceType device) {
  constexpr const char* kOp = "fieldbrain::hierarchy_apply_";
  TORCH_CHECK(pending.defined() && pending.dim() == 2 &&
                  pending.size(1) >= h::pending_width(1) &&
                  (pending.size(1) - h::kPendingTargets) % 4 == 0,
              kOp, ": pending must have shape [B, pending_width(S)], got ",
              pending.defined() ? c10::str(pending.sizes()) : "undefined");
  const int64_t B = pending.size(0);
  check_learn_tensor(kOp, "pending", pending, pending.sizes().vec(), device);
  const int64_t R = check_learn_field(kOp, "field", field, B, device);
  check_learn_tensor(kOp, "field", field, field.sizes().vec(), device, &pending);
  return {B, R};
}

std::pair<int64_t, int64_t> check_error_field_args(const at::Tensor& e, const at::Tensor& facts,
                                                   const at::Tensor& ef, const at::Tensor& has_ef,
                                                   const at::Tensor& boost, c10::DeviceType device) {
  constexpr const char* kOp = "fieldbrain::error_field_update_";
  TORCH_CHECK(e.defined() && e.dim() == 2 && e.size(1) >= 1, kOp,
              ": e must have shape [B,S] with S >= 1, got ",
              e.defined() ? c10::str(e.sizes()) : "undefined");
  const int64_t B = e.size(0);
  check_learn_tensor(kOp, "e", e, e.sizes().vec(), device);
  check_learn_tensor(kOp, "facts", facts, {B, kFactColumns}, device, &e, at::kLong);
  TORCH_CHECK(ef.defined() && ef.dim() == 4, kOp, ": ef must have shape [B,R,R,R], got ",
              ef.defined() ? c10::str(ef.sizes()) : "undefined");
  const int64_t R = ef.size(1);
  TORCH_CHECK(R >= 4 && R <= 1024, kOp, ": ef must have 4 <= R <= 1024, got ", R);
  check_learn_tensor(kOp, "ef", ef, {B, R, R, R}, device, &e);
  check_learn_tensor(kOp, "has_ef", has_ef, {B}, device, &e);
  check_learn_tensor(kOp, "boost", boost, {B}, device, &e);
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
