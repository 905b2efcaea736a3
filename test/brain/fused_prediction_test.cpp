// The fast path's fused prediction operators (brain/ops/prediction.h: docs/cycle.md step 1 and
// steps 8-11) against the modules' ATen methods, cycle by cycle on a small batch with silence,
// input and rewards of both signs: the same modules built twice (fused and not) from the same
// seeds, fed the same fields, facts and noise keys; and what a fused call costs on the CPU.
#include "test/support/catch.h"

#include <algorithm>
#include <cmath>

#include "brain/cycle_context.h"
#include "brain/cycle_facts.h"
#include "brain/hierarchical_predictor.h"
#include "brain/motor_echo.h"
#include "brain/motor_generation.h"
#include "brain/next_input_prediction.h"
#include "brain/next_input_prediction_fused.h"
#include "brain/ops/allocation_counter.h"
#include "brain/ops/field_readout.h"
#include "brain/ops/field_step.h"
#include "brain/ops/philox.h"
#include "brain/ops/prediction.h"
#include "brain/spatial_pooling.h"
#include "test/brain/brain_state.h"
#include "test/support/devices.h"

namespace fieldbrain::test {
namespace {

constexpr double kFusedTolerance = 1e-5;

struct Shape {
  int64_t B, S, M, R;
};

uint64_t seed_of(int64_t b) { return 1000 + 17 * static_cast<uint64_t>(b); }

// The modules steps 1, 8-11 touch, built as FieldBrainImpl::build does for one path.
struct Modules {
  HierarchicalPredictor hierarchy{nullptr};
  SpatialPooling pooling{nullptr};
  std::shared_ptr<NextInputPredictionState> prediction;  // whichever variant was built
  NextInputPrediction ref_prediction{nullptr};
  FusedNextInputPrediction fused_prediction{nullptr};
  MotorGeneration motors{nullptr};
  MotorEcho echo{nullptr};
  CycleFacts facts;
  torch::Tensor readout, eps_m, eps_x, key;

  Modules(const Shape& s, const torch::Device& dev, bool fused) {
    hierarchy = HierarchicalPredictor(HierarchicalPredictorOptions(s.B, s.S, s.R).device(dev));
    pooling = SpatialPooling(SpatialPoolingOptions(s.B).device(dev));
    const auto prediction_options = NextInputPredictionOptions(s.B, s.S).device(dev);
    if (fused) {
      fused_prediction = FusedNextInputPrediction(prediction_options);
      prediction = fused_prediction.ptr();
    } else {
      ref_prediction = NextInputPrediction(prediction_options);
      prediction = ref_prediction.ptr();
    }
    motors = MotorGeneration(MotorGenerationOptions(s.B, s.M).device(dev));
    echo = MotorEcho(MotorEchoOptions(s.M, s.R).device(dev));
    facts.allocate(s.B, s.S, dev);
    const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(dev);
    readout = torch::zeros({s.B, ops::kReadoutWidth}, opts);
    eps_m = torch::zeros({s.B, std::max<int64_t>(s.M - 4, 0)}, opts);
    eps_x = torch::zeros({s.B, s.M}, opts);
    key = torch::zeros({s.B, 2}, torch::kLong);
    for (int64_t b = 0; b < s.B; ++b) {
      hierarchy->init_robot(b, seed_of(b));
      key[b][0] = static_cast<int64_t>(seed_of(b));
    }
    key = key.to(dev);
  }
};

// Inputs of cycle i: the smooth test stream, robot 0 silent in cycles [20, 35), rewards of
// both signs (robot 1 every 5th cycle, alternating).
torch::Tensor sensors_at(int64_t i, const Shape& s) {
  std::vector<uint64_t> keys;
  for (int64_t b = 0; b < s.B; ++b) keys.push_back(static_cast<uint64_t>(3 + b));
  auto a = test_sensors(i, keys, s.S);
  if (i >= 20 && i < 35) a[0].zero_();
  return a;
}
float reward_at(int64_t i, int64_t b) {
  if (b == 1 && i % 5 == 0) return (i / 5) % 2 ? 0.7f : -0.6f;
  return 0.0f;
}

// The cycle's facts, written as run_cycle writes them, from the modules' ring counts.
CycleContext facts_of(Modules& m, int64_t i, const torch::Tensor& sensors) {
  const int64_t B = sensors.size(0), S = sensors.size(1);
  CycleContext ctx;
  ctx.batch = B;
  std::copy(sensors.data_ptr<float>(), sensors.data_ptr<float>() + B * S,
            m.facts.sensors_host.data_ptr<float>());
  for (int64_t b = 0; b < B; ++b) {
    float peak = 0.0f;
    for (int64_t j = 0; j < S; ++j) peak = std::max(peak, std::fabs(sensors[b][j].item<float>()));
    const float r = reward_at(i, b);
    ctx.cycle.push_back(i);
    ctx.scored.push_back(i >= 1);
    ctx.has_input.push_back(peak > 0.01f);
    ctx.skip_imprint.push_back(peak <= 0.01f);
    ctx.reward.push_back(r);
    int64_t* f = m.facts.row(b);
    f[kFactCycle] = i;
    f[kFactHasInput] = peak > 0.01f ? 1 : 0;
    f[kFactHistCount] = m.hierarchy->hist->count(b);
    f[kFactRecentCount] = m.prediction->recent->count(b);
    for (int k = 0; k < 4; ++k) f[kFactHerrCount0 + k] = m.hierarchy->herr[k]->count(b);
    float* v = m.facts.values_row(b);
    v[kValueCycle] = static_cast<float>(i);
    v[kValueScored] = i >= 1 ? 1.0f : 0.0f;
    v[kValueReward] = r;
    v[kValuePhase] = static_cast<float>(0.1 * static_cast<double>(i));
  }
  m.facts.upload();
  ctx.facts = m.facts.device;
  ctx.value_facts = m.facts.values;
  ctx.sensors = m.facts.sensors;
  ctx.n = m.facts.values.select(1, kValueCycle);
  ctx.scored_f = m.facts.values.select(1, kValueScored);
  ctx.reward_d = m.facts.values.select(1, kValueReward);
  ctx.phase = m.facts.values.select(1, kValuePhase);
  return ctx;
}

// The field of cycle i on the CPU: normals with an amplitude that grows along x, so that the
// low-x cells stay below the pooling threshold and the high-x ones above it.
torch::Tensor field_at(int64_t i, const Shape& s) {
  auto key = torch::zeros({s.B, 2}, torch::kLong);
  for (int64_t b = 0; b < s.B; ++b) {
    key[b][0] = static_cast<int64_t>(seed_of(b) + 5);
    key[b][1] = i;
  }
  auto F = torch::empty({s.B, 64, s.R, s.R, s.R});
  ops::philox_normal_out(key, philox::kStreamInitialField, F);
  const auto envelope = torch::linspace(0.1, 1.5, s.R).view({1, 1, s.R, 1, 1});
  return F * envelope * 0.4 + 0.02 * static_cast<double>(i % 3);
}

torch::Tensor explore_at(int64_t i, const Shape& s) {
  auto e = torch::empty({s.B});
  for (int64_t b = 0; b < s.B; ++b) e[b] = static_cast<float>(0.2 + 0.15 * b + 0.05 * (i % 4));
  return e;
}

// Steps 1 and 2 (step 2 with the ATen method on every path: it is not part of this operator).
void begin_cycle(Modules& m, const CycleContext& ctx, const torch::Tensor& field) {
  if (m.fused_prediction) {
    m.fused_prediction->score(ctx, m.pooling->n_active);
  } else {
    m.ref_prediction->score(ctx, m.pooling->n_active);
  }
  m.hierarchy->observe(ctx, field);
}

// Steps 8-11 on the path the modules were built for; the field is updated in place.
void end_cycle(Modules& m, const CycleContext& ctx, torch::Tensor& field,
               const torch::Tensor& explore, int64_t i) {
  m.key.select(1, 1).fill_(i);
  if (m.fused_prediction) {
    ops::field_readout_out(field, m.readout);
    m.fused_prediction->predict_and_act(ctx, m.readout, *m.hierarchy, *m.pooling, *m.motors,
                                        *m.echo, explore, m.key, field);
  } else {
    if (m.motors->options.motor_dim() > 4)
      ops::philox_normal_out(m.key, philox::kStreamExtraMotors, m.eps_m);
    ops::philox_normal_out(m.key, philox::kStreamExploration, m.eps_x);
    m.pooling->update(field);
    m.ref_prediction->predict(ctx, field, *m.hierarchy, *m.pooling);
    m.echo->apply(field, m.motors->generate(field, explore, m.eps_m, m.eps_x));
  }
}

// Runs `cycles` cycles of both module sets and compares every output after each step.
void compare_paths(const Shape& s, const torch::Device& dev_a, bool fused_a,
                   const torch::Device& dev_b, bool fused_b, int64_t cycles, double tolerance) {
  Modules a(s, dev_a, fused_a), b(s, dev_b, fused_b);
  double worst = 0.0;
  auto near = [&](const char* what, const torch::Tensor& x, const torch::Tensor& y) {
    const double d = max_diff(x.cpu(), y.cpu());
    worst = std::max(worst, d);
    INFO(what << " differs by " << d);
    REQUIRE(d <= tolerance);
  };
  auto same = [&](const char* what, const torch::Tensor& x, const torch::Tensor& y) {
    INFO(what);
    REQUIRE(torch::equal(x.cpu(), y.cpu()));
  };
  for (int64_t i = 0; i < cycles; ++i) {
    CAPTURE(i);
    const auto sensors = sensors_at(i, s);
    const auto ctx_a = facts_of(a, i, sensors), ctx_b = facts_of(b, i, sensors);
    REQUIRE(torch::equal(a.facts.host, b.facts.host));  // the same ring counts on both paths
    const auto start = field_at(i, s);
    begin_cycle(a, ctx_a, start.to(dev_a));
    begin_cycle(b, ctx_b, start.to(dev_b));
    near("conf", a.prediction->conf, b.prediction->conf);
    near("last_err", a.prediction->last_err, b.prediction->last_err);

    const auto next = field_at(i + 1000, s);
    auto field_a = next.to(dev_a).clone(), field_b = next.to(dev_b).clone();
    const auto explore = explore_at(i, s);
    end_cycle(a, ctx_a, field_a, explore.to(dev_a), i);
    end_cycle(b, ctx_b, field_b, explore.to(dev_b), i);
    same("active cells", a.pooling->active, b.pooling->active);
    same("n_active", a.pooling->n_active, b.pooling->n_active);
    near("temporal cell means", a.pooling->temporal, b.pooling->temporal);
    near("hpred", a.hierarchy->hpred, b.hierarchy->hpred);
    near("pred", a.prediction->pred, b.prediction->pred);
    near("pc", a.prediction->pc, b.prediction->pc);
    same("recent ring", a.prediction->recent->data, b.prediction->recent->data);
    same("recent counts", a.prediction->recent->counts, b.prediction->recent->counts);
    near("motors", a.motors->motor, b.motors->motor);
    near("field after the echo", field_a, field_b);
  }
  // The run went through every regime: some cells inactive, every timescale's errors pushed.
  REQUIRE(a.pooling->n_active.min().item<float>() < 64.0f);
  REQUIRE(a.pooling->n_active.max().item<float>() > 0.0f);
  REQUIRE(a.hierarchy->herr[3]->count(0) > 0);
  WARN("B=" << s.B << " S=" << s.S << " M=" << s.M << " R=" << s.R << ": worst max|diff| "
            << worst << " over " << cycles << " cycles");
}

}  // namespace

TEST_CASE("The fused prediction operators follow the modules' ATen methods cycle by cycle",
          "[brain][fused]") {
  // S not a multiple of 16 and M > 4 (extra motors) in one case, M = 1 (no direction echo) in
  // another; 110 cycles so that the history reaches 100 inputs (timescales 2 and 3 active).
  const Shape s = GENERATE(Shape{3, 24, 4, 8}, Shape{2, 20, 6, 16}, Shape{2, 10, 1, 8});
  CAPTURE(s.B, s.S, s.M, s.R);
  compare_paths(s, torch::kCPU, false, torch::kCPU, true, 110, kFusedTolerance);
}

TEST_CASE("The fused prediction operators create no tensor on the CPU in steady state",
          "[brain][fused]") {
  const Shape s{3, 24, 6, 8};
  Modules m(s, torch::kCPU, true);
  torch::Tensor field;
  CycleContext ctx;
  const auto explore = explore_at(0, s);
  for (int64_t i = 0; i < 6; ++i) {
    const auto sensors = sensors_at(i, s);
    ctx = facts_of(m, i, sensors);
    begin_cycle(m, ctx, field_at(i, s));
    field = field_at(i + 1000, s);
    end_cycle(m, ctx, field, explore, i);
  }
  ops::field_readout_out(field, m.readout);
  ops::AllocationCounter counter;
  m.fused_prediction->score(ctx, m.pooling->n_active);
  m.fused_prediction->predict_and_act(ctx, m.readout, *m.hierarchy, *m.pooling, *m.motors, *m.echo,
                                      explore, m.key, field);
  REQUIRE(counter.count() == 0);
}

TEST_CASE("The fused prediction operators refuse a wrong argument, naming it", "[brain][fused]") {
  const auto sensors = torch::zeros({2, 5});
  const auto facts = torch::zeros({2, kFactColumns}, torch::kLong);
  const auto n_active = torch::zeros({2});
  auto conf = torch::zeros({2});
  auto last_err = torch::zeros({2, 5});
  const auto strided_pred = torch::zeros({5, 2}).t();  // [2,5] but not contiguous
  REQUIRE_THROWS_WITH(
      ops::prediction_score(sensors, facts, n_active, strided_pred, conf, last_err),
      Catch::Contains("pred must be contiguous"));
  auto short_conf = torch::zeros({3});
  REQUIRE_THROWS_WITH(
      ops::prediction_score(sensors, facts, n_active, torch::zeros({2, 5}), short_conf, last_err),
      Catch::Contains("conf must have shape"));
  const auto narrow_facts = torch::zeros({2, 3}, torch::kLong);
  REQUIRE_THROWS_WITH(
      ops::prediction_score(sensors, narrow_facts, n_active, torch::zeros({2, 5}), conf, last_err),
      Catch::Contains("facts must be"));
}

TEST_CASE("The fused prediction operators on CUDA follow the CPU", "[cuda][brain][fused]") {
  if (!cuda_or_skip("fused prediction operators, CUDA vs CPU")) return;
  const Shape s = GENERATE(Shape{3, 24, 4, 8}, Shape{2, 20, 6, 16});
  CAPTURE(s.B, s.S, s.M, s.R);
  compare_paths(s, torch::kCPU, true, torch::kCUDA, true, 110, kFusedTolerance);
}

}  // namespace fieldbrain::test
