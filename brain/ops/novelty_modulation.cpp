// Argument checks of fieldbrain::novelty_modulation_ (brain/ops/novelty_modulation.h): what its
// kernels on every device take.
#include "brain/ops/novelty_modulation.h"

#include "brain/ops/arg_check.h"
#include "brain/ops/cycle_layout.h"

namespace fieldbrain {
namespace ops {

modulation::ModulationArrays NoveltyModulation::prepare(
    c10::DeviceType device, const at::Tensor& field, const at::Tensor& last_err,
    const at::Tensor& activity_stats, const at::Tensor& facts, const at::Tensor& value_facts,
    const at::Tensor& has_ef, const at::Tensor& boost, at::Tensor& nov, at::Tensor& nov_ts,
    at::Tensor& perr, at::Tensor& pimp, at::TensorList state, at::Tensor& step_scalars) {
  using namespace modulation;
  ArgCheck check("fieldbrain::novelty_modulation_", device);
  check.dims("field", field, 5, "[B,64,R,R,R]");
  const int64_t B = field.size(0), R = field.size(2);
  TORCH_CHECK(field.size(1) == 64 && field.size(3) == R && field.size(4) == R && R >= 8,
              check.op(), ": field must have shape [B,64,R,R,R] with R >= 8, got ",
              shape_text(field.sizes()));
  check("field", field, {B, 64, R, R, R});
  check.dims("last_err", last_err, 2, "[B,S]");
  check("last_err", last_err, {B, kAnySize}, at::kFloat, ArgLayout::kContiguous, "[B,S]");
  TORCH_CHECK(last_err.size(1) >= 1, check.op(), ": last_err must have shape [B,S] with S >= 1");
  // Two adjacent columns of a wider table.
  check("activity_stats", activity_stats, {B, kAnySize}, at::kFloat, ArgLayout::kRows);
  TORCH_CHECK(activity_stats.size(1) >= 2, check.op(), ": activity_stats must be [B,>=2]");
  check("facts", facts, {B, kFactColumns}, at::kLong);
  check("value_facts", value_facts, {B, kValueColumns});
  check("has_ef", has_ef, {B});
  check("boost", boost, {B});
  check("nov", nov, {B, kNovCapacity, kNovDim});
  check("nov_ts", nov_ts, {B, kNovCapacity}, at::kLong);
  check("perr", perr, {B, kErrCapacity});
  check("pimp", pimp, {B, kErrCapacity});
  check("step_scalars", step_scalars, {B, kStepScalars});
  TORCH_CHECK(state.size() == kStateCount, check.op(), ": state must hold ", int(kStateCount),
              " tensors, got ", state.size());
  for (size_t k = 0; k < state.size(); ++k) {
    check.element("state", static_cast<int64_t>(k), state[k], {B});
  }

  ModulationArrays a{};
  a.field = field.data_ptr<float>();
  a.last_err = last_err.data_ptr<float>();
  a.stats = activity_stats.data_ptr<float>();
  a.facts = facts.data_ptr<int64_t>();
  a.values = value_facts.data_ptr<float>();
  a.has_ef = has_ef.data_ptr<float>();
  a.boost = boost.data_ptr<float>();
  a.nov = nov.data_ptr<float>();
  a.nov_ts = nov_ts.data_ptr<int64_t>();
  a.perr = perr.data_ptr<float>();
  a.pimp = pimp.data_ptr<float>();
  for (int k = 0; k < kStateCount; ++k) a.state[k] = state[k].data_ptr<float>();
  a.step_scalars = step_scalars.data_ptr<float>();
  a.resolution = R;
  a.sensory_dim = last_err.size(1);
  a.stats_stride = activity_stats.stride(0);
  a.batch = B;
  return a;
}

}  // namespace ops
}  // namespace fieldbrain
