// Schema of fieldbrain::novelty_modulation_ (torchvision layout: schema here, one kernel file per
// device under cpu/ and cuda/), its argument checks and the C++ entry point of
// brain/ops/novelty_modulation.h.
#include "brain/ops/novelty_modulation.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <string>

#include "brain/ops/cycle_layout.h"

TORCH_LIBRARY_FRAGMENT(fieldbrain, m) {
  m.def(
      "novelty_modulation_(Tensor field, Tensor last_err, Tensor activity_stats, Tensor facts, "
      "Tensor value_facts, Tensor has_ef, Tensor boost, Tensor(a!) nov, Tensor(b!) nov_ts, "
      "Tensor(c!) perr, Tensor(d!) pimp, Tensor(e!)[] state, Tensor(f!) step_scalars) -> ()");
}

namespace fieldbrain {
namespace ops {
namespace {

constexpr const char* kModulationOp = "fieldbrain::novelty_modulation_";

// The name of an argument in an error message (built only when a check fails).
std::string modulation_arg_name(const char* name, int index) {
  return index < 0 ? std::string(name) : c10::str(name, "[", index, "]");
}

// `t` must have `shape`, `dtype`, live on `device` and be contiguous (no copy is ever made).
// `index` >= 0 names an element of the state list. Takes the shape as an IntArrayRef so that
// the checks allocate nothing on the host either.
void check_modulation_arg(const at::Tensor& t, const char* name, at::IntArrayRef shape,
                          at::ScalarType dtype, c10::DeviceType device, int index = -1) {
  TORCH_CHECK(t.defined(), kModulationOp, ": ", modulation_arg_name(name, index), " is undefined");
  TORCH_CHECK(t.sizes() == shape, kModulationOp, ": ", modulation_arg_name(name, index),
              " must have shape ", shape, ", got ", t.sizes());
  TORCH_CHECK(t.scalar_type() == dtype, kModulationOp, ": ", modulation_arg_name(name, index),
              " must be ", dtype, ", got ", t.scalar_type());
  TORCH_CHECK(t.device().type() == device, kModulationOp, ": ", modulation_arg_name(name, index),
              " must be on ", c10::DeviceTypeName(device), " for this kernel, got ", t.device());
  TORCH_CHECK(t.is_contiguous(), kModulationOp, ": ", modulation_arg_name(name, index),
              " must be contiguous");
}

}  // namespace

modulation::ModulationArrays check_novelty_modulation(
    const at::Tensor& field, const at::Tensor& last_err, const at::Tensor& activity_stats,
    const at::Tensor& facts, const at::Tensor& value_facts, const at::Tensor& has_ef,
    const at::Tensor& boost, const at::Tensor& nov, const at::Tensor& nov_ts,
    const at::Tensor& perr, const at::Tensor& pimp, at::TensorList state,
    const at::Tensor& step_scalars, c10::DeviceType device) {
  using namespace modulation;
  TORCH_CHECK(field.defined() && field.dim() == 5 && field.size(1) == 64 &&
                  field.size(2) == field.size(3) && field.size(2) == field.size(4) &&
                  field.size(2) >= 8,
              kModulationOp, ": field must have shape [B,64,R,R,R] with R >= 8, got ",
              field.defined() ? field.sizes() : at::IntArrayRef{});
  const int64_t B = field.size(0), R = field.size(2);
  check_modulation_arg(field, "field", field.sizes(), at::kFloat, device);
  TORCH_CHECK(last_err.defined() && last_err.dim() == 2 && last_err.size(1) >= 1, kModulationOp,
              ": last_err must have shape [B,S]");
  check_modulation_arg(last_err, "last_err", {B, last_err.size(1)}, at::kFloat, device);
  TORCH_CHECK(activity_stats.defined() && activity_stats.dim() == 2 &&
                  activity_stats.size(0) == B && activity_stats.size(1) >= 2 &&
                  activity_stats.stride(1) == 1 && activity_stats.stride(0) >= 2 &&
                  activity_stats.scalar_type() == at::kFloat &&
                  activity_stats.device().type() == device,
              kModulationOp, ": activity_stats must be float32 [B,>=2] on ",
              c10::DeviceTypeName(device), " with adjacent columns");
  check_modulation_arg(facts, "facts", {B, kFactColumns}, at::kLong, device);
  check_modulation_arg(value_facts, "value_facts", {B, kValueColumns}, at::kFloat, device);
  check_modulation_arg(has_ef, "has_ef", {B}, at::kFloat, device);
  check_modulation_arg(boost, "boost", {B}, at::kFloat, device);
  check_modulation_arg(nov, "nov", {B, kNovCapacity, kNovDim}, at::kFloat, device);
  check_modulation_arg(nov_ts, "nov_ts", {B, kNovCapacity}, at::kLong, device);
  check_modulation_arg(perr, "perr", {B, kErrCapacity}, at::kFloat, device);
  check_modulation_arg(pimp, "pimp", {B, kErrCapacity}, at::kFloat, device);
  check_modulation_arg(step_scalars, "step_scalars", {B, kStepScalars}, at::kFloat, device);
  TORCH_CHECK(state.size() == kStateCount, kModulationOp, ": state must hold ", int(kStateCount),
              " tensors, got ", state.size());
  for (size_t k = 0; k < state.size(); ++k) {
    check_modulation_arg(state[k], "state", {B}, at::kFloat, device, static_cast<int>(k));
  }
  const auto dev = field.device();
  for (const at::Tensor* t : {&last_err, &activity_stats, &facts, &value_facts, &has_ef, &boost,
                              &nov, &nov_ts, &perr, &pimp, &step_scalars}) {
    TORCH_CHECK(t->device() == dev, kModulationOp, ": every tensor must be on ", dev, ", got ",
                t->device());
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
  for (int k = 0; k < kStateCount; ++k) {
    TORCH_CHECK(state[k].device() == dev, kModulationOp, ": state[", k, "] must be on ", dev);
    a.state[k] = state[k].data_ptr<float>();
  }
  a.step_scalars = step_scalars.data_ptr<float>();
  a.resolution = R;
  a.sensory_dim = last_err.size(1);
  a.stats_stride = activity_stats.stride(0);
  return a;
}

void novelty_modulation_(const at::Tensor& field, const at::Tensor& last_err,
                         const at::Tensor& activity_stats, const at::Tensor& facts,
                         const at::Tensor& value_facts, const at::Tensor& has_ef,
                         const at::Tensor& boost, at::Tensor& nov, at::Tensor& nov_ts,
                         at::Tensor& perr, at::Tensor& pimp, at::TensorList state,
                         at::Tensor& step_scalars) {
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("fieldbrain::novelty_modulation_", "")
          .typed<void(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&,
                      const at::Tensor&, const at::Tensor&, const at::Tensor&, at::Tensor&,
                      at::Tensor&, at::Tensor&, at::Tensor&, at::TensorList, at::Tensor&)>();
  op.call(field, last_err, activity_stats, facts, value_facts, has_ef, boost, nov, nov_ts, perr,
          pimp, state, step_scalars);
}

}  // namespace ops
}  // namespace fieldbrain
