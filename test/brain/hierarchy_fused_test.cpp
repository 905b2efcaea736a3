// The fused operators of docs/cycle.md steps 2, 3 and 7.10 (brain/ops/hierarchy_learn.h) against
// the modules' ATen methods they replace on the fast path (HierarchicalPredictor::observe,
// PredictionErrorField::update, the add of U_h), cycle by cycle on a small batch, and what
// the fused calls cost in steady state.
#include "test/support/catch.h"

#include <cmath>
#include <string>

#include "brain/cycle_facts.h"
#include "brain/hierarchical_predictor.h"
#include "brain/hierarchical_predictor_fused.h"
#include "brain/ops/allocation_counter.h"
#include "brain/ops/hierarchy_learn.h"
#include "brain/ops/hierarchy_learn_math.h"
#include "brain/prediction_error_field.h"
#include "brain/prediction_error_field_fused.h"
#include "test/brain/brain_state.h"
#include "test/support/devices.h"

namespace fieldbrain::test {
namespace {

constexpr int64_t kHierB = 3, kHierS = 24, kHierR = 8;
// Means are accumulated in double by the kernels and in float by ATen: they agree to rounding.
constexpr double kHierTolerance = 1e-5;

// Cycle i's per-robot inputs (all on the CPU, deterministic): sensors with varying amplitude
// (robot 0 silent for a stretch, so n >= 1 with no input is covered), the field at cycle start,
// the previous prediction, the field step's output `next` and a reward of either sign.
struct CycleInputs {
  torch::Tensor sensors, field, pred, next;
  std::vector<float> reward;
};

CycleInputs inputs_of(int64_t i) {
  torch::manual_seed(1000 + i);
  CycleInputs in;
  const double amp = 0.02 + 0.6 * static_cast<double>(i % 7) / 6.0;
  in.sensors = (torch::rand({kHierB, kHierS}) * 2 - 1) * amp + 0.05 * std::sin(0.1 * i);
  if (i >= 20 && i < 30) in.sensors[0].zero_();
  in.field = torch::randn({kHierB, 64, kHierR, kHierR, kHierR}) * 0.3 + 0.01 * static_cast<double>(i % 5);
  in.pred = torch::rand({kHierB, kHierS}) * 0.8 - 0.4;
  in.next = torch::randn({kHierB, 64, kHierR, kHierR, kHierR});
  for (int64_t b = 0; b < kHierB; ++b) in.reward.push_back(((i + b) % 9 == 0) ? (b % 2 ? -0.6f : 0.7f) : 0.0f);
  return in;
}

// One implementation (reference ATen or fused) of the two modules with its own fact tables,
// filled like FieldBrainImpl::run_cycle fills them.
struct Side {
  // Whichever variant was built, as the state both keep.
  std::shared_ptr<HierarchicalPredictorState> hierarchy;
  std::shared_ptr<PredictionErrorFieldState> error_field;
  HierarchicalPredictor ref_hierarchy{nullptr};
  PredictionErrorField ref_error_field{nullptr};
  FusedHierarchicalPredictor fused_hierarchy{nullptr};
  FusedPredictionErrorField fused_error_field{nullptr};
  CycleFacts facts;
  torch::Device device;

  Side(bool fused, const torch::Device& where) : device(where) {
    const auto hierarchy_options = HierarchicalPredictorOptions(kHierB, kHierS, kHierR).device(where);
    const auto error_options = PredictionErrorFieldOptions(kHierB, kHierS, kHierR).device(where);
    if (fused) {
      fused_hierarchy = FusedHierarchicalPredictor(hierarchy_options);
      fused_error_field = FusedPredictionErrorField(error_options);
      hierarchy = fused_hierarchy.ptr();
      error_field = fused_error_field.ptr();
    } else {
      ref_hierarchy = HierarchicalPredictor(hierarchy_options);
      ref_error_field = PredictionErrorField(error_options);
      hierarchy = ref_hierarchy.ptr();
      error_field = ref_error_field.ptr();
    }
    for (int64_t b = 0; b < kHierB; ++b) hierarchy->init_robot(b, 77 + 5 * b);
    facts.allocate(kHierB, kHierS, where);
  }

  CycleContext context(int64_t cycle, const CycleInputs& in) {
    CycleContext ctx;
    ctx.batch = kHierB;
    std::copy(in.sensors.data_ptr<float>(), in.sensors.data_ptr<float>() + kHierB * kHierS,
              facts.sensors_host.data_ptr<float>());
    for (int64_t b = 0; b < kHierB; ++b) {
      ctx.cycle.push_back(cycle);
      ctx.scored.push_back(cycle >= 1);
      const bool has_input = in.sensors[b].abs().max().item<float>() > 0.01f;
      ctx.has_input.push_back(has_input);
      ctx.skip_imprint.push_back(!has_input);
      ctx.reward.push_back(in.reward[b]);
      int64_t* f = facts.row(b);
      f[kFactCycle] = cycle;
      f[kFactHasInput] = has_input ? 1 : 0;
      f[kFactHistCount] = hierarchy->hist->count(b);
      for (int64_t k = 0; k < 4; ++k) f[kFactHerrCount0 + k] = hierarchy->herr[k]->count(b);
      float* v = facts.values_row(b);
      v[kValueCycle] = static_cast<float>(cycle);
      v[kValueScored] = cycle >= 1 ? 1.0f : 0.0f;
      v[kValueReward] = in.reward[b];
      v[kValuePhase] = static_cast<float>(0.1 * static_cast<double>(cycle));
    }
    facts.upload();
    ctx.facts = facts.device;
    ctx.value_facts = facts.values;
    ctx.sensors = facts.sensors;
    ctx.n = facts.values.select(1, kValueCycle);
    ctx.scored_f = facts.values.select(1, kValueScored);
    ctx.reward_d = facts.values.select(1, kValueReward);
    ctx.phase = facts.values.select(1, kValuePhase);
    return ctx;
  }

  // Steps 2, 3 and 7.10 of cycle i; returns the field after 7.10 (on the CPU).
  torch::Tensor step(int64_t cycle, const CycleInputs& in) {
    const auto ctx = context(cycle, in);
    const auto field = in.field.to(device);
    const auto e = (ctx.sensors - in.pred.to(device)).contiguous();
    auto out = torch::empty_like(field);
    if (fused_hierarchy) {
      fused_hierarchy->observe(ctx, field);
      fused_error_field->update(ctx, e);
      out.copy_(in.next);  // the field the attractor pull writes: next
      fused_hierarchy->apply_pending(out);
    } else {
      const auto pending = ref_hierarchy->observe(ctx, field);
      ref_error_field->update(ctx, e);
      ref_hierarchy->add_pending(out, in.next.to(device), pending);
    }
    hierarchy->predict(field);  // hpred for the next cycle (the ATen method on both sides)
    return out.cpu();
  }
};

// Every piece of state the three steps touch, side by side, within the tolerance.
void require_same_state(Side& ref, Side& fused, const torch::Tensor& out_ref,
                        const torch::Tensor& out_fused, int64_t cycle) {
  INFO("cycle " << cycle);
  for (int64_t b = 0; b < kHierB; ++b) {
    REQUIRE(fused.hierarchy->hist->count(b) == ref.hierarchy->hist->count(b));
    for (int k = 0; k < 4; ++k) REQUIRE(fused.hierarchy->herr[k]->count(b) == ref.hierarchy->herr[k]->count(b));
  }
  const std::pair<std::string, std::pair<torch::Tensor, torch::Tensor>> pairs[] = {
      {"field after step 7.10", {out_ref, out_fused}},
      {"W", {ref.hierarchy->W, fused.hierarchy->W}},
      {"hist", {ref.hierarchy->hist->data, fused.hierarchy->hist->data}},
      {"herr0", {ref.hierarchy->herr[0]->data, fused.hierarchy->herr[0]->data}},
      {"herr1", {ref.hierarchy->herr[1]->data, fused.hierarchy->herr[1]->data}},
      {"herr2", {ref.hierarchy->herr[2]->data, fused.hierarchy->herr[2]->data}},
      {"herr3", {ref.hierarchy->herr[3]->data, fused.hierarchy->herr[3]->data}},
      {"ef", {ref.error_field->ef, fused.error_field->ef}},
      {"has_ef", {ref.error_field->has_ef, fused.error_field->has_ef}},
      {"boost", {ref.error_field->boost, fused.error_field->boost}},
  };
  for (const auto& [name, t] : pairs) {
    const double d = max_diff(t.first.cpu(), t.second.cpu());
    INFO(name << " differs by " << d);
    REQUIRE(d <= kHierTolerance);
  }
}

}  // namespace

TEST_CASE("The fused hierarchy and error-field operators follow the ATen steps 2, 3 and 7.10",
          "[brain][fused]") {
  Side ref(false, torch::kCPU), fused(true, torch::kCPU);
  // 130 cycles: the history reaches 100 items, so all four timescales learn and write.
  int64_t cubes_written = 0, spreads_seen = 0;
  bool seen[4] = {false, false, false, false};
  for (int64_t i = 0; i < 130; ++i) {
    const auto in = inputs_of(i);
    const auto out_ref = ref.step(i, in);
    const auto out_fused = fused.step(i, in);
    require_same_state(ref, fused, out_ref, out_fused, i);
    const float* row = fused.fused_hierarchy->pending.data_ptr<float>();
    const int64_t width = ops::hierarchy::pending_width(kHierS);
    for (int64_t b = 0; b < kHierB; ++b) {
      for (int k = 0; k < 4; ++k) {
        const float s = row[b * width + ops::hierarchy::kPendingSpread + k];
        if (s > 0) {
          ++cubes_written;
          seen[static_cast<int>(s)] = true;
        }
      }
    }
  }
  spreads_seen = seen[1] + seen[2] + seen[3];
  // The run exercised what it is meant to: every timescale's errors, and the cubes of every
  // spread (1, 2, 3), and the error field's boost above 1.
  for (int k = 0; k < 4; ++k) REQUIRE(fused.hierarchy->herr[k]->count(0) > 0);
  REQUIRE(cubes_written > 0);
  REQUIRE(spreads_seen == 3);
  REQUIRE(fused.error_field->boost.max().item<float>() > 1.0f);
}

TEST_CASE("The fused hierarchy steps create no tensor in steady state", "[brain][fused]") {
  Side fused(true, torch::kCPU);
  for (int64_t i = 0; i < 3; ++i) fused.step(i, inputs_of(i));
  const auto in = inputs_of(3);
  const auto ctx = fused.context(3, in);
  const auto field = in.field, next = in.next;
  const auto e = (ctx.sensors - in.pred).contiguous();
  auto out = torch::empty_like(field);
  ops::AllocationCounter counter;
  for (int r = 0; r < 3; ++r) {  // the same cycle's calls again: no new tensor each time
    fused.fused_hierarchy->observe(ctx, field);
    fused.fused_error_field->update(ctx, e);
    out.copy_(next);
    fused.fused_hierarchy->apply_pending(out);
  }
  REQUIRE(counter.count() == 0);
}

TEST_CASE("The fused hierarchy operators refuse non-contiguous or misshapen arguments",
          "[brain][fused]") {
  Side fused(true, torch::kCPU);
  const auto in = inputs_of(1);
  const auto ctx = fused.context(1, in);
  const auto strided = torch::zeros({kHierB, 2 * kHierS}).slice(1, 0, kHierS, 2);
  REQUIRE_THROWS_WITH(fused.fused_error_field->update(ctx, strided), Catch::Contains("contiguous"));
  REQUIRE_THROWS_WITH(fused.fused_hierarchy->observe(ctx, torch::zeros({kHierB, 63, kHierR, kHierR, kHierR})),
                      Catch::Contains("field"));
  const auto strided_field = torch::zeros({kHierB, 64, kHierR, kHierR, 2 * kHierR}).slice(4, 0, kHierR);
  REQUIRE_THROWS_WITH(ops::hierarchy_apply_(strided_field, fused.fused_hierarchy->pending),
                      Catch::Contains("contiguous"));
  REQUIRE_THROWS_WITH(ops::hierarchy_apply_(torch::zeros({kHierB + 1, 64, kHierR, kHierR, kHierR}),
                                            fused.fused_hierarchy->pending),
                      Catch::Contains("shape"));
}

TEST_CASE("The CUDA hierarchy operators follow the CPU ones", "[brain][fused][cuda]") {
  if (!cuda_or_skip("The CUDA hierarchy operators follow the CPU ones")) return;
  Side cpu(true, torch::kCPU), gpu(true, torch::Device(torch::kCUDA));
  for (int64_t i = 0; i < 130; ++i) {
    const auto in = inputs_of(i);
    const auto out_cpu = cpu.step(i, in);
    const auto out_gpu = gpu.step(i, in);
    require_same_state(cpu, gpu, out_cpu, out_gpu, i);
  }
}

}  // namespace fieldbrain::test
