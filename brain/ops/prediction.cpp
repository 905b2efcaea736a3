// Argument checks of fieldbrain::prediction_score / prediction_act (brain/ops/prediction.h):
// what their kernels on every device take.
#include "brain/ops/prediction.h"

#include "brain/ops/arg_check.h"
#include "brain/ops/cycle_layout.h"  // the fact table's columns

namespace fieldbrain {
namespace ops {
namespace {

// The fact table: [B, >= kFactColumns] int64 (wider rows are allowed); returns its row stride.
int64_t facts_stride(ArgCheck& check, const at::Tensor& facts, int64_t B) {
  check("facts", facts, {B, kAnySize}, at::kLong);
  TORCH_CHECK(facts.size(1) >= kFactColumns, check.op(), ": facts must be [B, >= ",
              static_cast<int64_t>(kFactColumns), "] int64, got ", shape_text(facts.sizes()));
  return facts.size(1);
}

}  // namespace

prediction::ScoreArgs PredictionScore::prepare(c10::DeviceType device, const at::Tensor& sensors,
                                               const at::Tensor& facts, const at::Tensor& n_active,
                                               const at::Tensor& pred, at::Tensor& conf,
                                               at::Tensor& last_err) {
  ArgCheck check("fieldbrain::prediction_score", device);
  check.dims("sensors", sensors, 2, "[B,S]");
  const int64_t B = sensors.size(0), S = sensors.size(1);
  TORCH_CHECK(S >= 1, check.op(), ": sensors must be [B,S] with S >= 1");
  check("sensors", sensors, {B, S}, at::kFloat, ArgLayout::kContiguous, "[B,S]");
  prediction::ScoreArgs a;
  a.facts_stride = facts_stride(check, facts, B);
  check("n_active", n_active, {B});
  check("pred", pred, {B, S}, at::kFloat, ArgLayout::kContiguous, "[B,S]");
  check("conf", conf, {B});
  check("last_err", last_err, {B, S}, at::kFloat, ArgLayout::kContiguous, "[B,S]");
  a.sensors = sensors.data_ptr<float>();
  a.facts = facts.data_ptr<int64_t>();
  a.n_active = n_active.data_ptr<float>();
  a.pred = pred.data_ptr<float>();
  a.conf = conf.data_ptr<float>();
  a.last_err = last_err.data_ptr<float>();
  a.S = S;
  a.batch = B;
  return a;
}

prediction::ActArgs PredictionAct::prepare(
    c10::DeviceType device, const at::Tensor& readout, const at::Tensor& facts,
    const at::Tensor& noise_key, const at::Tensor& sensors, const at::Tensor& W,
    const at::Tensor& herr0, const at::Tensor& herr1, const at::Tensor& herr2,
    const at::Tensor& herr3, const at::Tensor& explore, const at::Tensor& lin, at::Tensor& recent,
    at::Tensor& active, at::Tensor& n_active, at::Tensor& temporal, at::Tensor& hpred,
    at::Tensor& pred, at::Tensor& pc, at::Tensor& motor, at::Tensor& field) {
  ArgCheck check("fieldbrain::prediction_act", device);
  check.dims("sensors", sensors, 2, "[B,S]");
  check.dims("motor", motor, 2, "[B,M]");
  check.dims("field", field, 5, "[B,64,R,R,R]");
  const int64_t B = sensors.size(0), S = sensors.size(1), M = motor.size(1), R = field.size(2);
  TORCH_CHECK(S >= 1 && M >= 1, check.op(), ": sensors and motor need S >= 1 and M >= 1");
  TORCH_CHECK(R >= 4 && R <= 1024, check.op(), ": field must be [B,64,R,R,R] with 4 <= R <= 1024");
  check("sensors", sensors, {B, S}, at::kFloat, ArgLayout::kContiguous, "[B,S]");
  prediction::ActArgs a;
  a.facts_stride = facts_stride(check, facts, B);
  check("readout", readout, {B, kReadoutWidth});
  check("noise_key", noise_key, {B, 2}, at::kLong);
  check("W", W, {B, 4, 16, S}, at::kFloat, ArgLayout::kContiguous, "[B,4,16,S]");
  const at::Tensor* herr[4] = {&herr0, &herr1, &herr2, &herr3};
  const char* herr_names[4] = {"herr0", "herr1", "herr2", "herr3"};
  for (int k = 0; k < 4; ++k) check(herr_names[k], *herr[k], {B, prediction::kHerrCapacity});
  check("explore", explore, {B});
  check("lin", lin, {R});
  check("recent", recent, {B, prediction::kRecentCapacity, S});
  check("active", active, {B, kReadoutCells});
  check("n_active", n_active, {B});
  check("temporal", temporal, {B, 16, kReadoutCells});
  check("hpred", hpred, {B, 4, S});
  check("pred", pred, {B, S}, at::kFloat, ArgLayout::kContiguous, "[B,S]");
  check("pc", pc, {B, S});
  check("motor", motor, {B, M}, at::kFloat, ArgLayout::kContiguous, "[B,M]");
  check("field", field, {B, 64, R, R, R}, at::kFloat, ArgLayout::kContiguous, "[B,64,R,R,R]");
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
  a.batch = B;
  // The CUDA echo's grid has the robot on blockIdx.y.
  TORCH_CHECK(device != c10::DeviceType::CUDA || B <= 65535,
              "fieldbrain::prediction_act (CUDA): at most 65535 robots, got ", B);
  return a;
}

}  // namespace ops
}  // namespace fieldbrain
