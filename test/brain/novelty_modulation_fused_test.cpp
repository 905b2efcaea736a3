// The fused modulation (fieldbrain::novelty_modulation_, docs/cycle.md steps 5 and 7.6) against
// the module's ATen method, cycle by cycle on a small batch whose inputs visit every branch:
// the empty memory, similar and new fields, memory entries too old to count (the cycle number
// advances by 7 per call), the memory ring wrapping, silence long enough to dream, a flat error
// (plateau), scored and unscored cycles, the error field on and off with a changing boost.
#include <algorithm>
#include "test/support/catch.h"
#include <vector>

#include "brain/cycle_context.h"
#include "brain/cycle_facts.h"
#include "brain/novelty_modulation.h"
#include "brain/novelty_modulation_fused.h"
#include "brain/ops/allocation_counter.h"
#include "test/brain/brain_state.h"
#include "test/support/devices.h"

namespace fieldbrain::test {
namespace {

constexpr int64_t kNoveltyR = 8, kNoveltyS = 24, kCycles = 260;
constexpr int64_t kCycleStep = 7;  // n advances by 7: entries reach age 1000 after 143 calls

// Host-side inputs of one call, made on the CPU from a fixed seed.
struct CallInputs {
  torch::Tensor field;     // [B,64,R,R,R]
  torch::Tensor last_err;  // [B,S]
  torch::Tensor stats;     // [B,2] view of a [B,5] table (rows 5 floats apart)
  torch::Tensor has_ef, boost;
  std::vector<bool> has_input;
};

class InputStream {
 public:
  explicit InputStream(int64_t batch) : B_(batch) {
    torch::manual_seed(1234);
    field_ = torch::randn({B_, 64, kNoveltyR, kNoveltyR, kNoveltyR});
    err_ = torch::rand({B_, kNoveltyS}) * 0.4;
  }

  CallInputs next(int64_t i) {
    CallInputs in;
    // A new field every 6th call, otherwise a small drift (a familiar corner block).
    if (i % 6 == 0) {
      field_ = torch::randn({B_, 64, kNoveltyR, kNoveltyR, kNoveltyR}) * (1.0 + 0.01 * static_cast<double>(i % 50));
    } else {
      field_ = field_ + 0.02 * torch::randn({B_, 64, kNoveltyR, kNoveltyR, kNoveltyR});
    }
    in.field = field_.clone();
    // The error: random, then flat for a stretch (improvements near 0: plateau), then random.
    if (i < 90 || i >= 190) err_ = torch::rand({B_, kNoveltyS}) * 0.4;
    in.last_err = err_.clone();
    const auto X = in.field.slice(1, 0, 48).reshape({B_, -1});
    auto table = torch::zeros({B_, 5});
    table.select(1, 1).copy_(X.abs().mean(1));
    table.select(1, 2).copy_(X.var(1, /*unbiased=*/true));
    in.stats = table.slice(1, 1, 3);
    in.has_ef = torch::zeros({B_});
    in.boost = torch::ones({B_});
    for (int64_t b = 0; b < B_; ++b) {
      if (i >= 20 && b != 2) in.has_ef[b] = 1.0f;
      in.boost[b] = 1.0f + 0.02f * static_cast<float>((i + 5 * b) % 40);
      // Robot 0 silent for 130 calls (dreaming after 101), robot 1 briefly, robot 2 never.
      const bool silent = (b == 0 && i >= 40 && i < 170) || (b == 1 && i >= 60 && i < 75);
      in.has_input.push_back(!silent);
    }
    return in;
  }

 private:
  int64_t B_;
  torch::Tensor field_, err_;
};

// The cycle's context as run_cycle builds it, from the counts of `counts_of` (before the call).
struct ContextTables {
  torch::Tensor facts_host, values_host, facts, values;

  ContextTables(int64_t B, const torch::Device& device)
      : facts_host(torch::zeros({B, kFactColumns}, torch::kLong)),
        values_host(torch::zeros({B, kValueColumns})),
        facts(torch::zeros({B, kFactColumns}, torch::TensorOptions(torch::kLong).device(device))),
        values(torch::zeros({B, kValueColumns}, torch::TensorOptions().device(device))) {}

  CycleContext make(int64_t i, const CallInputs& in, const NoveltyModulationState& counts_of) {
    const int64_t B = facts_host.size(0);
    CycleContext ctx;
    ctx.batch = B;
    const int64_t n = kCycleStep * i;
    for (int64_t b = 0; b < B; ++b) {
      ctx.cycle.push_back(n);
      ctx.scored.push_back(n >= 1);
      ctx.has_input.push_back(in.has_input[b]);
      ctx.skip_imprint.push_back(!in.has_input[b]);
      ctx.reward.push_back(0.0f);
      auto* f = facts_host.data_ptr<int64_t>() + b * kFactColumns;
      f[kFactCycle] = n;
      f[kFactHasInput] = in.has_input[b] ? 1 : 0;
      f[kFactPerrCount] = counts_of.perr->count(b);
      f[kFactPimpCount] = counts_of.pimp->count(b);
      f[kFactNovCount] = counts_of.nov->count(b);
      f[kFactCyclesWithoutInput] = counts_of.cycles_without_input(b);
      auto* v = values_host.data_ptr<float>() + b * kValueColumns;
      v[kValueCycle] = static_cast<float>(n);
      v[kValueScored] = n >= 1 ? 1.0f : 0.0f;
      v[kValuePhase] = static_cast<float>(0.1 * static_cast<double>(n));
    }
    facts.copy_(facts_host);
    values.copy_(values_host);
    ctx.facts = facts;
    ctx.value_facts = values;
    ctx.n = values.select(1, kValueCycle);
    ctx.scored_f = values.select(1, kValueScored);
    ctx.reward_d = values.select(1, kValueReward);
    ctx.phase = values.select(1, kValuePhase);
    return ctx;
  }
};

struct Coverage {
  int familiar = 0;  // calls where some robot's novelty was below 0.5 (the memory matched)
  int dreaming = 0;  // robot-calls with drive = 0.95 while silent > 100 calls
  int plateau = 0;   // robot-calls with plateau > 0
};

// Runs the fused module on `device` and the ATen module on the CPU side by side for kCycles
// calls of B = 3 robots; returns the worst difference seen and what the inputs exercised.
double follow_aten(const torch::Device& device, Coverage& seen) {
  constexpr int64_t B = 3;
  NoveltyModulation aten{NoveltyModulationOptions(B)};
  FusedNoveltyModulation fused(NoveltyModulationOptions(B).device(device));
  InputStream stream(B);
  ContextTables cpu_tables(B, torch::kCPU), dev_tables(B, device);
  double worst = 0.0;
  for (int64_t i = 0; i < kCycles; ++i) {
    const CallInputs in = stream.next(i);
    const auto ctx_aten = cpu_tables.make(i, in, *aten);
    const auto ctx_fused = dev_tables.make(i, in, *fused);
    aten->update(ctx_aten, in.field, in.last_err, in.stats);
    // The field step's scalars as run_cycle stacks them on the reference path (old sigma).
    const auto zero = torch::zeros_like(aten->decay);
    const auto scalars = torch::stack(
        {aten->decay, aten->drive, aten->explore, aten->sigma, in.has_ef, zero, zero, zero}, 1);
    aten->update_sigma(ctx_aten, in.has_ef, in.boost);
    auto stats_dev = torch::zeros({B, 5}, torch::TensorOptions().device(device));
    stats_dev.slice(1, 1, 3).copy_(in.stats);
    fused->update(ctx_fused, in.field.to(device), in.last_err.to(device), stats_dev.slice(1, 1, 3),
                  in.has_ef.to(device), in.boost.to(device));

    INFO("call " << i << " (n = " << kCycleStep * i << ")");
    auto check = [&](const char* name, const torch::Tensor& a, const torch::Tensor& f,
                     double tolerance) {
      const double d = max_diff(a, f.cpu());
      worst = std::max(worst, d);
      INFO(name << " differs by " << d);
      REQUIRE(d <= tolerance);
    };
    check("step scalars", scalars, fused->step_scalars(), 1e-5);
    const std::vector<std::pair<const char*, torch::Tensor NoveltyModulationState::*>> scalars_of{
        {"si", &NoveltyModulationState::si},
        {"sc", &NoveltyModulationState::sc},
        {"plateau", &NoveltyModulationState::plateau},
        {"sigma", &NoveltyModulationState::sigma},
        {"prev_imp", &NoveltyModulationState::prev_imp},
        {"prev_amp", &NoveltyModulationState::prev_amp},
        {"novelty", &NoveltyModulationState::novelty},
        {"drive", &NoveltyModulationState::drive},
        {"explore", &NoveltyModulationState::explore},
        {"amp", &NoveltyModulationState::amp},
        {"imp", &NoveltyModulationState::imp},
        {"decay", &NoveltyModulationState::decay},
        {"info", &NoveltyModulationState::info}};
    for (const auto& [name, member] : scalars_of)
      check(name, (*aten).*member, (*fused).*member, 1e-5);
    check("nov", aten->nov->data, fused->nov->data, 1e-5);
    check("perr", aten->perr->data, fused->perr->data, 1e-6);
    check("pimp", aten->pimp->data, fused->pimp->data, 1e-6);
    REQUIRE(torch::equal(aten->nov_ts, fused->nov_ts.cpu()));
    REQUIRE(fused->nov_ts.device().type() == device.type());  // "cuda" names cuda:0
    for (int64_t b = 0; b < B; ++b) {
      REQUIRE(fused->nov->count(b) == aten->nov->count(b));
      REQUIRE(fused->perr->count(b) == aten->perr->count(b));
      REQUIRE(fused->pimp->count(b) == aten->pimp->count(b));
      REQUIRE(fused->cycles_without_input(b) == aten->cycles_without_input(b));
      if (aten->cycles_without_input(b) > 100 && aten->drive[b].item<float>() == 0.95f) {
        ++seen.dreaming;
      }
      if (aten->plateau[b].item<float>() > 0.0f) ++seen.plateau;
    }
    if (aten->novelty.min().item<float>() < 0.5f) ++seen.familiar;
  }
  return worst;
}

}  // namespace

TEST_CASE("The fused modulation follows the ATen method cycle by cycle", "[brain][fused]") {
  Coverage seen;
  const double worst = follow_aten(torch::kCPU, seen);
  // The inputs reached the branches they are meant to.
  CHECK(seen.familiar > 20);
  CHECK(seen.dreaming > 20);
  CHECK(seen.plateau > 5);
  WARN("fused vs ATen modulation over "
       << kCycles << " calls: worst max|diff| " << worst << "; familiar calls " << seen.familiar
       << ", dreaming robot-calls " << seen.dreaming << ", plateau robot-calls " << seen.plateau);
}

TEST_CASE("The fused modulation creates no tensor in steady state", "[brain][fused]") {
  constexpr int64_t B = 2;
  FusedNoveltyModulation fused{NoveltyModulationOptions(B)};
  InputStream stream(B);
  ContextTables tables(B, torch::kCPU);
  for (int64_t i = 0; i < 30; ++i) {
    const CallInputs in = stream.next(i);
    const auto ctx = tables.make(i, in, *fused);
    const auto perr_before = fused->perr->count(0);
    int64_t requests = 0;
    {
      ops::AllocationCounter counter;
      fused->update(ctx, in.field, in.last_err, in.stats, in.has_ef, in.boost);
      requests = counter.count();
    }
    REQUIRE(fused->perr->count(0) == perr_before + 1);  // the call did run
    if (i >= 3) {
      INFO("call " << i);
      REQUIRE(requests == 0);
    }
  }
  // Positive control: the counter sees the ATen method's temporaries.
  NoveltyModulation aten{NoveltyModulationOptions(B)};
  const CallInputs in = stream.next(30);
  const auto ctx = tables.make(30, in, *aten);
  ops::AllocationCounter counter;
  aten->update(ctx, in.field, in.last_err, in.stats);
  CHECK(counter.count() > 10);
}

TEST_CASE("The fused modulation refuses arguments it would have to copy", "[brain][fused]") {
  constexpr int64_t B = 2;
  FusedNoveltyModulation fused{NoveltyModulationOptions(B)};
  InputStream stream(B);
  ContextTables tables(B, torch::kCPU);
  const CallInputs in = stream.next(0);
  const auto ctx = tables.make(0, in, *fused);
  const auto field_cl = in.field.transpose(2, 4);  // not contiguous
  CHECK_THROWS_WITH(fused->update(ctx, field_cl, in.last_err, in.stats, in.has_ef, in.boost),
                    Catch::Contains("field must be contiguous"));
  CHECK_THROWS_WITH(
      fused->update(ctx, in.field, in.last_err.t().contiguous().t(), in.stats, in.has_ef, in.boost),
      Catch::Contains("last_err"));
  CHECK_THROWS_WITH(
      fused->update(ctx, in.field, in.last_err, in.stats, in.has_ef.to(torch::kDouble), in.boost),
      Catch::Contains("has_ef must be float32"));
  CHECK_THROWS_AS(fused->update(ctx, in.field, in.last_err, in.stats), std::invalid_argument);
  CHECK(fused->perr->count(0) == 0);  // nothing ran
}

TEST_CASE("The CUDA fused modulation follows the ATen method", "[brain][fused][cuda]") {
  if (!cuda_or_skip("The CUDA fused modulation follows the ATen method")) return;
  Coverage seen;
  const double worst = follow_aten(torch::Device(torch::kCUDA), seen);
  CHECK(seen.familiar > 20);
  WARN("CUDA fused vs ATen modulation: worst max|diff| " << worst);
}

}  // namespace fieldbrain::test
