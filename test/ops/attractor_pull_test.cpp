// The fused reward-attractor operators (brain/ops/attractor_pull.h) against the attractor
// formulas of docs/cycle.md steps 6 and 7.9 written with plain ATen ops in double; the bank's
// 16-bit shadow against the floats; their argument checks; their allocation behaviour; and CUDA
// against the CPU.
#include "brain/ops/attractor_pull.h"

#include "test/support/catch.h"

#include <cmath>
#include <limits>
#include <utility>

#include "brain/ops/allocation_counter.h"
#include "brain/ops/attractor_math.h"
#include "brain/ops/cpu/field_step_passes.h"
#include "test/support/devices.h"

namespace {

using namespace fieldbrain::ops;
using Catch::Contains;

constexpr int64_t kB = 3, kA = 4, kR = 8;

struct Case {
  torch::Tensor next, field;  // the pull's input (the field after step 7.8) and its output
  torch::Tensor bank, shadow, shadow_scale, weights, workspace;
  torch::Tensor source, no_store;  // attractor_pull_'s step-6 store: a field, and no slot (-1)
};

// The shadow as the rule of brain/ops/attractor_math.h says, written here with ATen on rows
// `values` [C, V] (a row per slot channel): NaN as 0, saturated at +-65504, each row's largest
// |value| m mapped to 32767 levels (step m / 32767, factor 32767 / m, round half to even),
// m = 0 giving zero levels and step. Returns levels [C, V] int16 and steps [C].
std::pair<torch::Tensor, torch::Tensor> shadow_rule(const torch::Tensor& values) {
  const double top = kAttractorShadowMax, levels = kAttractorShadowLevels;
  const auto y = values.nan_to_num(0.0, top, -top).clamp(-top, top);
  const auto m = y.abs().amax({1});
  const auto some = m > 0;
  const auto inverse = torch::where(some, torch::full_like(m, levels).div(m), torch::zeros_like(m));
  const auto step = torch::where(some, m.div(levels), torch::zeros_like(m));
  return {y.mul(inverse.unsqueeze(1)).round().clamp(-levels, levels).to(torch::kShort), step};
}

// The case's shadow from its bank [B,A,64,R,R,R] by the rule.
void set_shadow_of_bank(Case& c) {
  const auto rule = shadow_rule(c.bank.reshape({kB * kA * 64, -1}));
  c.shadow = rule.first.view(c.bank.sizes());
  c.shadow_scale = rule.second.view({kB, kA, 64});
}

// The slots as the shadow holds them (levels * step, in float as the move computes them).
torch::Tensor shadow_values(const Case& c) {
  return c.shadow.to(torch::kFloat) * c.shadow_scale.unsqueeze(-1).unsqueeze(-1).unsqueeze(-1);
}

// attractor_pull_ on a case: field = next pulled, with step 6's store into `slot`.
void pull(Case& c, const torch::Tensor& slot) {
  attractor_pull_(c.field, c.next, c.bank, c.shadow, c.shadow_scale, c.weights, c.workspace,
                  c.source, slot);
}

// Robot 0 has two attracting slots and one repelling, robot 1 none, robot 2 one of each.
Case make_case(const torch::Device& device = torch::kCPU) {
  torch::manual_seed(7);
  Case c;
  c.next = torch::randn({kB, 64, kR, kR, kR});
  c.bank = torch::randn({kB, kA, 64, kR, kR, kR}) + 0.3 * c.next.unsqueeze(1);
  c.weights = torch::zeros({kB, kA, kAttractorWeightColumns});
  auto set = [&](int64_t b, int64_t j, float w, float valence) {
    c.weights[b][j][kAttractorWeight] = w;
    c.weights[b][j][kAttractorValence] = valence;
  };
  set(0, 0, 0.006f, 1.f);
  set(0, 2, 0.002f, 1.f);
  set(0, 3, -0.004f, -1.f);
  set(1, 1, 0.f, 1.f);  // a slot that pulls nothing
  set(2, 1, 0.0045f, 1.f);
  set(2, 3, -0.001f, -1.f);
  c.workspace = torch::zeros({kB, attractor_workspace_width(kA)}, torch::kDouble);
  set_shadow_of_bank(c);
  c.shadow = c.shadow.to(device);
  c.shadow_scale = c.shadow_scale.to(device);
  c.field = torch::full({kB, 64, kR, kR, kR}, std::nanf("")).to(device);  // written whole
  c.next = c.next.to(device);
  c.bank = c.bank.to(device);
  c.weights = c.weights.to(device);
  c.workspace = c.workspace.to(device);
  c.source = torch::randn({kB, 64, kR, kR, kR}).to(device);
  c.no_store = torch::full({kB}, int64_t{-1}, torch::kLong).to(device);
  return c;
}

// Step 7.9 in double from the formula on the slots `bank` [B,A,64,R,R,R]: F + sum_j (P_j - F)
// w_j gate_j, cos from the same F (next).
torch::Tensor expected_pull(const Case& c, const torch::Tensor& slots) {
  const auto F = c.next.cpu().to(torch::kDouble);
  const auto bank = slots.cpu().to(torch::kDouble);
  const auto w = c.weights.cpu().to(torch::kDouble);
  auto out = F.clone();
  for (int64_t b = 0; b < kB; ++b) {
    for (int64_t j = 0; j < kA; ++j) {
      const double weight = w[b][j][kAttractorWeight].item<double>();
      if (weight == 0.0) continue;
      const auto P = bank[b][j];
      const auto cosv = torch::cosine_similarity(F[b].reshape({-1}), P.reshape({-1}), 0, 1e-8);
      const auto gate = w[b][j][kAttractorValence].item<double>() > 0 ? (1 + cosv) / 2 : (1 - cosv) / 2;
      out[b] += (P - F[b]) * weight * gate;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("attractor_pull_ writes each robot's field as next moved by its live slots, as the "
          "shadow holds them, as the step 7.9 formula says",
          "[ops][attractors]") {
  auto c = make_case();
  const auto next_before = c.next.clone();
  const auto expected = expected_pull(c, shadow_values(c));
  pull(c, c.no_store);
  const double diff = (c.field.to(torch::kDouble) - expected).abs().max().item<double>();
  INFO("max |fused - formula| = " << diff);
  CHECK(diff <= 2e-6);
  CHECK(torch::equal(c.next, next_before));  // the input is read only
  CHECK(torch::equal(c.field[1], c.next[1]));  // no live slot: a copy of next
  CHECK((c.field[0] - c.next[0]).abs().max().item<float>() > 1e-4f);  // and a real pull elsewhere
  // In place (field = next): the same bits.
  auto in_place = make_case();
  attractor_pull_(in_place.next, in_place.next, in_place.bank, in_place.shadow,
                  in_place.shadow_scale, in_place.weights, in_place.workspace, in_place.source,
                  in_place.no_store);
  CHECK(torch::equal(in_place.next, c.field));
}

TEST_CASE("attractor_pull_ with the 16-bit shadow moves the field within 1e-6 of the pull "
          "towards the float slots, and a slot beyond the shadow's range saturates instead of "
          "poisoning the field",
          "[ops][attractors]") {
  auto c = make_case();
  // Robot 2's slot 1 (it pulls) holds values far beyond the shadow's 65504 in two channels.
  c.bank[2][1][5][1][2][3] = 1e6f;
  c.bank[2][1][9][0][0][0] = -3e38f;
  set_shadow_of_bank(c);
  pull(c, c.no_store);
  CHECK(torch::isfinite(c.field).all().item<bool>());
  CHECK(torch::isfinite(shadow_values(c)).all().item<bool>());
  CHECK(c.shadow[2][1][5][1][2][3].item<int16_t>() == 32767);
  CHECK(c.shadow_scale[2][1][5].item<float>() == kAttractorShadowMax / kAttractorShadowLevels);
  // Every other value is within half a step of its slot value (plus the float roundings of
  // the step and the factor, each up to 2^-24 relatively over 32767 levels: < 0.004 step).
  const auto step = c.shadow_scale.unsqueeze(-1).unsqueeze(-1).unsqueeze(-1);
  const auto error = (shadow_values(c) - c.bank).abs() / step;
  CHECK(error.slice(0, 0, 2).max().item<float>() <= 0.5f + 0.008f);
  // The gate of every pulling slot from the operator's sums (the workspace, attractor_math.h)
  // against cos in double of the float bank (independent of the shadow), in the unsaturated
  // slots; the field against the formula.
  const auto F = c.next.to(torch::kDouble);
  const auto bank = c.bank.to(torch::kDouble);
  const int width = attractor_sums_width(kA);
  const auto sums = c.workspace.view({kB, 64, width}).sum(1);  // [B, width]
  int checked = 0;
  for (int64_t b = 0; b < kB; ++b) {
    int64_t l = 0;  // the slot's place among the robot's pulling slots
    for (int64_t j = 0; j < kA; ++j) {
      if (c.weights[b][j][kAttractorWeight].item<float>() == 0.f) continue;
      const double ff = sums[b][0].item<double>(), fp = sums[b][1 + 2 * l].item<double>(),
                   pp = sums[b][2 + 2 * l].item<double>();
      ++l;
      if (b == 2 && j == 1) continue;  // saturated: its gate differs by design
      const double shadow_cos = fp / std::sqrt(ff * pp);
      const double exact_cos =
          torch::cosine_similarity(F[b].reshape({-1}), bank[b][j].reshape({-1}), 0, 1e-8)
              .item<double>();
      // Each slot value moves by at most half a step (1.5e-5 of its channel's largest, here
      // ~5), with random signs: over the 64 R^3 = 32768 values of a robot here the cosine
      // moves by ~1e-7. The gate (1 +- cos)/2 then moves the coefficient by far less than
      // float's rounding of the moved field.
      INFO("robot " << b << " slot " << j << ": cos " << shadow_cos << " vs " << exact_cos);
      CHECK(std::abs(shadow_cos - exact_cos) <= 1e-6);
      ++checked;
    }
  }
  CHECK(checked == 4);
  // The field of the robots without a saturated slot against the pull towards the float slots
  // in double: within 1e-6 of the field's magnitude (the move towards a value half a step off
  // by at most |c_j| <= 0.006 of it: ~1e-7 of the field's ~5).
  const auto expected = expected_pull(c, c.bank).slice(0, 0, 2);
  const double diff = (c.field.slice(0, 0, 2).to(torch::kDouble) - expected).abs().max().item<double>();
  const double scale = expected.abs().max().item<double>();
  INFO("robots 0-1: max |fused - float slots in double| = " << diff << " of " << scale);
  CHECK(diff <= 1e-6 * scale);
}

TEST_CASE("Every CPU instruction-set variant makes a shadow channel's levels and step by the rule",
          "[ops][attractors]") {
  // Lengths with and without a vector tail; NaN, infinities and values beyond the saturation
  // among ordinary ones, and a channel of zeros. Every variant must give the rule's bits: the
  // rebuild after a load (ATen) and the stores of a pull (the kernel) must agree wherever the
  // brain runs.
  torch::manual_seed(11);
  for (const int64_t n : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{1000}}) {
    for (int kind = 0; kind < 3; ++kind) {
      auto x = torch::randn({n}) * 3;
      if (kind == 1) {
        x[0] = std::nanf("");
        x[n / 2] = -std::numeric_limits<float>::infinity();
        x[n - 1] = n > 2 ? 1e6f : x[n - 1].item<float>();
      }
      if (kind == 2) x.zero_();
      const auto rule = shadow_rule(x.view({1, n}));
      for (const auto* passes : fieldbrain::ops::cpu::runnable_passes()) {
        auto levels = torch::full({n}, int16_t{123}, torch::kShort);
        const float step = passes->attractor_to_shadow(x.data_ptr<float>(),
                                                       levels.data_ptr<int16_t>(), n);
        INFO(passes->isa << ", n = " << n << ", kind " << kind);
        CHECK(torch::equal(levels, rule.first.view({n})));
        CHECK(step == rule.second.item<float>());
      }
    }
  }
}

TEST_CASE("attractor_record_ copies the field into the planned slot and nowhere else",
          "[ops][attractors]") {
  auto c = make_case();
  const auto bank_before = c.bank.clone();
  const auto slot = torch::tensor({int64_t{2}, int64_t{-1}, int64_t{0}});
  attractor_record_(c.bank, c.next, slot);
  CHECK(torch::equal(c.bank[0][2], c.next[0]));
  CHECK(torch::equal(c.bank[2][0], c.next[2]));
  CHECK(torch::equal(c.bank[1], bank_before[1]));  // slot -1: nothing stored
  for (int64_t j : {0, 1, 3}) CHECK(torch::equal(c.bank[0][j], bank_before[0][j]));
  // A strided slot column (a view of a facts table) is read with its stride.
  const auto table = torch::full({kB, 3}, int64_t{-1}, torch::kLong);
  table[1][1] = 3;
  attractor_record_(c.bank, c.next, table.select(1, 1));
  CHECK(torch::equal(c.bank[1][3], c.next[1]));
}

TEST_CASE("attractor_pull_ stores the source into the planned slot first, bit for bit as "
          "attractor_record_ then attractor_pull_ do",
          "[ops][attractors]") {
  // Robot 0 stores into a pulling slot, robot 1 into a slot that pulls nothing, robot 2 none.
  const auto slot = torch::tensor({int64_t{2}, int64_t{1}, int64_t{-1}});
  auto fused = make_case();
  auto apart = make_case();
  const auto bank_before = fused.bank.clone();
  pull(fused, slot);
  attractor_record_(apart.bank, apart.source, slot);
  set_shadow_of_bank(apart);  // the record operator keeps no shadow: made by the rule
  pull(apart, apart.no_store);
  CHECK(torch::equal(fused.bank[0][2], fused.source[0]));
  CHECK(torch::equal(fused.bank[1][1], fused.source[1]));
  CHECK(torch::equal(fused.bank[2], bank_before[2]));
  CHECK(torch::equal(fused.bank, apart.bank));
  // The store's shadow has the rule's bits (what a shadow rebuilt after a load holds).
  CHECK(torch::equal(fused.shadow, apart.shadow));
  CHECK(torch::equal(fused.shadow_scale, apart.shadow_scale));
  CHECK(torch::equal(fused.field, apart.field));
  // The stored slot pulls with its new content: the field moved differently than with the old.
  auto old = make_case();
  pull(old, old.no_store);
  CHECK((fused.field[0] - old.field[0]).abs().max().item<float>() > 1e-6f);
  CHECK(torch::equal(fused.field[2], old.field[2]));
}

TEST_CASE("The attractor operators refuse bad arguments with a message naming them",
          "[ops][attractors]") {
  auto c = make_case();
  auto call = [&](const torch::Tensor& field, const torch::Tensor& next,
                  const torch::Tensor& shadow, const torch::Tensor& weights,
                  const torch::Tensor& workspace, const torch::Tensor& source,
                  const torch::Tensor& slot) {
    auto f = field;
    auto s = shadow;
    auto w = workspace;
    attractor_pull_(f, next, c.bank, s, c.shadow_scale, weights, w, source, slot);
  };
  CHECK_THROWS_WITH(call(c.field, c.next, c.shadow, torch::zeros({kB, kA, 3}), c.workspace,
                         c.source, c.no_store),
                    Contains("weights"));
  CHECK_THROWS_WITH(call(c.field, c.next, c.shadow, c.weights,
                         torch::zeros({kB, 3}, torch::kDouble), c.source, c.no_store),
                    Contains("workspace"));
  CHECK_THROWS_WITH(call(c.field.transpose(2, 3), c.next, c.shadow, c.weights, c.workspace,
                         c.source, c.no_store),
                    Contains("contiguous"));
  CHECK_THROWS_WITH(call(c.field, c.next.transpose(2, 3), c.shadow, c.weights, c.workspace,
                         c.source, c.no_store),
                    Contains("next"));
  CHECK_THROWS_WITH(call(c.field, c.next, c.bank, c.weights, c.workspace, c.source, c.no_store),
                    Contains("shadow"));  // float, not int16
  CHECK_THROWS_WITH(call(c.field, c.next, c.shadow.slice(1, 0, kA - 1), c.weights, c.workspace,
                         c.source, c.no_store),
                    Contains("shadow"));
  CHECK_THROWS_WITH(call(c.field, c.next, c.shadow, c.weights, c.workspace,
                         c.source.transpose(2, 3), c.no_store),
                    Contains("source"));
  CHECK_THROWS_WITH(call(c.field, c.next, c.shadow, c.weights, c.workspace, c.source,
                         torch::full({kB}, kA, torch::kLong)),
                    Contains("beyond"));
  auto short_scale = c.shadow_scale.slice(2, 0, 63).contiguous();
  CHECK_THROWS_WITH(attractor_pull_(c.field, c.next, c.bank, c.shadow, short_scale, c.weights,
                                    c.workspace, c.source, c.no_store),
                    Contains("shadow_scale"));
  auto other_bank = torch::zeros({kB, kA, 64, kR + 1, kR + 1, kR + 1});
  CHECK_THROWS_WITH(attractor_record_(other_bank, c.next, torch::zeros({kB}, torch::kLong)),
                    Contains("bank"));
  CHECK_THROWS_WITH(attractor_record_(c.bank, c.next, torch::zeros({kB}, torch::kInt)),
                    Contains("slot"));
  CHECK_THROWS_WITH(attractor_record_(c.bank, c.next, torch::full({kB}, kA, torch::kLong)),
                    Contains("beyond"));
}

TEST_CASE("The attractor operators create no tensor once warm", "[ops][attractors][allocation]") {
  auto c = make_case();
  const auto slot = torch::tensor({int64_t{1}, int64_t{-1}, int64_t{3}});
  attractor_record_(c.bank, c.next, slot);
  pull(c, slot);  // warm: scratch grows
  AllocationCounter counter;
  for (int i = 0; i < 3; ++i) {
    attractor_record_(c.bank, c.next, slot);
    pull(c, slot);
  }
  CHECK(counter.count() == 0);
}

TEST_CASE("On CUDA the attractor operators give what the CPU gives", "[ops][attractors][cuda]") {
  if (!fieldbrain::test::cuda_or_skip("attractor operators on CUDA")) return;
  auto cpu = make_case();
  auto gpu = make_case(torch::kCUDA);
  const auto slot = torch::tensor({int64_t{1}, int64_t{-1}, int64_t{3}});
  attractor_record_(cpu.bank, cpu.next, slot);
  attractor_record_(gpu.bank, gpu.next, slot.cuda());
  CHECK(torch::equal(cpu.bank, gpu.bank.cpu()));
  set_shadow_of_bank(cpu);
  set_shadow_of_bank(gpu);
  pull(cpu, cpu.no_store);
  pull(gpu, gpu.no_store);
  CHECK((cpu.field - gpu.field.cpu()).abs().max().item<float>() <= 1e-5f);
  CHECK(torch::equal(cpu.field[1], gpu.field[1].cpu()));  // no pull: a copy of next
  // The pull's own store (floats and shadow), then its pull from the stored slot.
  const auto store = torch::tensor({int64_t{0}, int64_t{2}, int64_t{-1}});
  pull(cpu, store);
  pull(gpu, store.cuda());
  CHECK(torch::equal(cpu.bank, gpu.bank.cpu()));
  CHECK(torch::equal(cpu.shadow, gpu.shadow.cpu()));
  CHECK(torch::equal(cpu.shadow_scale, gpu.shadow_scale.cpu()));
  CHECK((cpu.field - gpu.field.cpu()).abs().max().item<float>() <= 1e-5f);
}
