// Schemas of fieldbrain::prediction_score / prediction_act (torchvision layout: schema here,
// one kernel file per device under cpu/ and cuda/), their argument checks and the C++ entry
// points of brain/ops/prediction.h.
#include "brain/ops/prediction.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "brain/ops/cycle_layout.h"  // the fact table's columns

TORCH_LIBRARY_FRAGMENT(fieldbrain, m) {
  m.def(
      "prediction_score(Tensor sensors, Tensor facts, Tensor n_active, Tensor pred, "
      "Tensor(a!) conf, Tensor(b!) last_err) -> ()");
  m.def(
      "prediction_act(Tensor readout, Tensor facts, Tensor noise_key, Tensor sensors, Tensor W, "
      "Tensor herr0, Tensor herr1, Tensor herr2, Tensor herr3, Tensor explore, Tensor lin, "
      "Tensor(a!) recent, Tensor(b!) active, Tensor(c!) n_active, Tensor(d!) temporal, "
      "Tensor(e!) hpred, Tensor(f!) pred, Tensor(g!) pc, Tensor(h!) motor, Tensor(i!) field) -> ()");
}

namespace fieldbrain {
namespace ops {
namespace {

// `t` must be a contiguous tensor of `type` and `shape` on `device` (never copied: the
// operators allocate nothing; `shape` is a braced list, no heap).
void check_arg(const char* op, const char* name, const at::Tensor& t, at::ScalarType type,
               at::IntArrayRef shape, const at::Device& device) {
  TORCH_CHECK(t.defined(), op, ": ", name, " is undefined");
  TORCH_CHECK(t.scalar_type() == type, op, ": ", name, " must be ", type, ", got ",
              t.scalar_type());
  TORCH_CHECK(t.sizes() == shape, op, ": ", name, " must have shape ", shape, ", got ",
              t.sizes());
  TORCH_CHECK(t.device() == device, op, ": ", name, " must be on ", device, ", got ", t.device());
  TORCH_CHECK(t.is_contiguous(), op, ": ", name, " must be contiguous");
}

// The row stride of the fact table (brain/ops/cycle_layout.h's columns; wider rows are allowed).
int64_t facts_stride(const char* op, const at::Tensor& facts, int64_t B,
                     const at::Device& device) {
  TORCH_CHECK(facts.defined() && facts.dim() == 2 && facts.size(1) >= kFactColumns, op,
              ": facts must be [B, >= ", static_cast<int64_t>(kFactColumns), "] int64");
  check_arg(op, "facts", facts, at::kLong, {B, facts.size(1)}, device);
  return facts.size(1);
}

}  // namespace

prediction::ScoreArgs prediction_score_args(const at::Tensor& sensors, const at::Tensor& facts,
                                            const at::Tensor& n_active, const at::Tensor& pred,
                                            at::Tensor& conf, at::Tensor& last_err,
                                            c10::DeviceType device) {
  constexpr const char* kOp = "fieldbrain::prediction_score";
  TORCH_CHECK(sensors.defined() && sensors.dim() == 2 && sensors.size(1) >= 1, kOp,
              ": sensors must be [B,S] with S >= 1");
  TORCH_CHECK(sensors.device().type() == device, kOp, ": sensors must be on ",
              c10::DeviceTypeName(device), " for this kernel, got ", sensors.device());
  const int64_t B = sensors.size(0), S = sensors.size(1);
  const at::Device dev = sensors.device();
  check_arg(kOp, "sensors", sensors, at::kFloat, {B, S}, dev);
  prediction::ScoreArgs a;
  a.facts_stride = facts_stride(kOp, facts, B, dev);
  check_arg(kOp, "n_active", n_active, at::kFloat, {B}, dev);
  check_arg(kOp, "pred", pred, at::kFloat, {B, S}, dev);
  check_arg(kOp, "conf", conf, at::kFloat, {B}, dev);
  check_arg(kOp, "last_err", last_err, at::kFloat, {B, S}, dev);
  a.sensors = sensors.data_ptr<float>();
  a.facts = facts.data_ptr<int64_t>();
  a.n_active = n_active.data_ptr<float>();
  a.pred = pred.data_ptr<float>();
  a.conf = conf.data_ptr<float>();
  a.last_err = last_err.data_ptr<float>();
  a.S = S;
  return a;
}

prediction::ActArgs prediction_act_args(const at::Tensor& readout, const at::Tensor& facts,
                                        const at::Tensor& noise_key, const at::Tensor& sensors,
                                        const at::Tensor& W, const at::Tensor& herr0,
                                        const at::Tensor& herr1, const at::Tensor& herr2,
                                        const at::Tensor& herr3, const at::Tensor& explore,
                                        const at::Tensor& lin, at::Tensor& recent,
                                        at::Tensor& active, at::Tensor& n_active,
                                        at::Tensor& temporal, at::Tensor& hpred, at::Tensor& pred,
                                        at::Tensor& pc, at::Tensor& motor, at::Tensor& field,
                                        c10::DeviceType device) {
  constexpr const char* kOp = "fieldbrain::prediction_act";
  TORCH_CHECK(sensors.defined() && sensors.dim() == 2 && sensors.size(1) >= 1, kOp,
              ": sensors must be [B,S] with S >= 1");
  TORCH_CHECK(motor.defined() && motor.dim() == 2 && motor.size(1) >= 1, kOp,
              ": motor must be [B,M] with M >= 1");
  TORCH_CHECK(field.defined() && field.dim() == 5 && field.size(1) == 64 && field.size(2) >= 4 &&
                  field.size(2) <= 1024,
              kOp, ": field must be [B,64,R,R,R] with 4 <= R <= 1024");
  TORCH_CHECK(sensors.device().type() == device, kOp, ": sensors must be on ",
              c10::DeviceTypeName(device), " for this kernel, got ", sensors.device());
  const int64_t B = sensors.size(0), S = sensors.size(1), M = motor.size(1), R = field.size(2);
  const at::Device dev = sensors.device();
  prediction::ActArgs a;
  a.facts_stride = facts_stride(kOp, facts, B, dev);
  check_arg(kOp, "readout", readout, at::kFloat, {B, kReadoutWidth}, dev);
  check_arg(kOp, "noise_key", noise_key, at::kLong, {B, 2}, dev);
  check_arg(kOp, "sensors", sensors, at::kFloat, {B, S}, dev);
  check_arg(kOp, "W", W, at::kFloat, {B, 4, 16, S}, dev);
  const at::Tensor* herr[4] = {&herr0, &herr1, &herr2, &herr3};
  const char* herr_names[4] = {"herr0", "herr1", "herr2", "herr3"};
  for (int k = 0; k < 4; ++k)
    check_arg(kOp, herr_names[k], *herr[k], at::kFloat, {B, prediction::kHerrCapacity}, dev);
  check_arg(kOp, "explore", explore, at::kFloat, {B}, dev);
  check_arg(kOp, "lin", lin, at::kFloat, {R}, dev);
  check_arg(kOp, "recent", recent, at::kFloat, {B, prediction::kRecentCapacity, S}, dev);
  check_arg(kOp, "active", active, at::kFloat, {B, kReadoutCells}, dev);
  check_arg(kOp, "n_active", n_active, at::kFloat, {B}, dev);
  check_arg(kOp, "temporal", temporal, at::kFloat, {B, 16, kReadoutCells}, dev);
  check_arg(kOp, "hpred", hpred, at::kFloat, {B, 4, S}, dev);
  check_arg(kOp, "pred", pred, at::kFloat, {B, S}, dev);
  check_arg(kOp, "pc", pc, at::kFloat, {B, S}, dev);
  check_arg(kOp, "motor", motor, at::kFloat, {B, M}, dev);
  check_arg(kOp, "field", field, at::kFloat, {B, 64, R, R, R}, dev);
  a.readout = readout.data_ptr<float>();
  a.facts = facts.data_ptr<int64_t>();
  a.noise_key = noise_key.data_ptr<int64_t>();
  a.sensors = sensors.data_ptr<float>();
  a.W = W.data_ptr<float>();
  for (int k = 0; k < 4; ++k) a.herr[k] = herr[k]->data_ptr<float>();
  a.explore = explore.data_ptr<float>();
  a.lin = lin.data_ptr<float>();
  a.recent = recent.data_ptr<float>();
  a.active = active.data_ptr<float>();
  a.n_active = n_active.data_ptr<float>();
  a.temporal = temporal.data_ptr<float>();
  a.hpred = hpred.data_ptr<float>();
  a.pred = pred.data_ptr<float>();
  a.pc = pc.data_ptr<float>();
  a.motor = motor.data_ptr<float>();
  a.field = field.data_ptr<float>();
  a.S = S;
  a.M = M;
  a.R = R;
  return a;
}

void prediction_score(const at::Tensor& sensors, const at::Tensor& facts,
                      const at::Tensor& n_active, const at::Tensor& pred, at::Tensor& conf,
                      at::Tensor& last_err) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("fieldbrain::prediction_score", "")
          .typed<void(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                      at::Tensor&, at::Tensor&)>();
  op.call(sensors, facts, n_active, pred, conf, last_err);
}

void prediction_act(const at::Tensor& readout, const at::Tensor& facts,
                    const at::Tensor& noise_key, const at::Tensor& sensors, const at::Tensor& W,
                    const at::Tensor& herr0, const at::Tensor& herr1, const at::Tensor& herr2,
                    const at::Tensor& herr3, const at::Tensor& explore, const at::Tensor& lin,
                    at::Tensor& recent, at::Tensor& active, at::Tensor& n_active,
                    at::Tensor& temporal, at::Tensor& hpred, at::Tensor& pred, at::Tensor& pc,
                    at::Tensor& motor, at::Tensor& field) {
  using C = const at::Tensor&;
  using O = at::Tensor&;
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("fieldbrain::prediction_act", "")
                             .typed<void(C, C, C, C, C, C, C, C, C, C, C, O, O, O, O, O, O, O, O, O)>();
  op.call(readout, facts, noise_key, sensors, W, herr0, herr1, herr2, herr3, explore, lin, recent,
          active, n_active, temporal, hpred, pred, pc, motor, field);
}

}  // namespace ops
}  // namespace fieldbrain
