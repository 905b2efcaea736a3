// The fused reward-attractor operators (brain/ops/attractor_pull.h) against the attractor
// formulas of docs/cycle.md steps 6 and 7.9 written with plain ATen ops in double; their
// argument checks; their allocation behaviour; and CUDA against the CPU.
#include "brain/ops/attractor_pull.h"

#include "test/support/catch.h"

#include "brain/ops/allocation_counter.h"
#include "brain/ops/attractor_math.h"
#include "test/support/devices.h"

namespace {

using namespace fieldbrain::ops;
using Catch::Contains;

constexpr int64_t kB = 3, kA = 4, kR = 8;

struct Case {
  torch::Tensor field, bank, weights, workspace;
  torch::Tensor source, no_store;  // attractor_pull_'s step-6 store: a field, and no slot (-1)
};

// Robot 0 has two attracting slots and one repelling, robot 1 none, robot 2 one of each.
Case make_case(const torch::Device& device = torch::kCPU) {
  torch::manual_seed(7);
  Case c;
  c.field = torch::randn({kB, 64, kR, kR, kR});
  c.bank = torch::randn({kB, kA, 64, kR, kR, kR}) + 0.3 * c.field.unsqueeze(1);
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
  c.field = c.field.to(device);
  c.bank = c.bank.to(device);
  c.weights = c.weights.to(device);
  c.workspace = c.workspace.to(device);
  c.source = torch::randn({kB, 64, kR, kR, kR}).to(device);
  c.no_store = torch::full({kB}, int64_t{-1}, torch::kLong).to(device);
  return c;
}

// Step 7.9 in double from the formula: F + sum_j (P_j - F) w_j gate_j, cos from the same F.
torch::Tensor expected_pull(const Case& c) {
  const auto F = c.field.cpu().to(torch::kDouble);
  const auto bank = c.bank.cpu().to(torch::kDouble);
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

TEST_CASE("attractor_pull_ moves each robot's field by its live slots as the step 7.9 formula says",
          "[ops][attractors]") {
  auto c = make_case();
  const auto before = c.field.clone();
  const auto expected = expected_pull(c);
  attractor_pull_(c.field, c.bank, c.weights, c.workspace, c.source, c.no_store);
  const double diff = (c.field.to(torch::kDouble) - expected).abs().max().item<double>();
  INFO("max |fused - formula| = " << diff);
  CHECK(diff <= 1e-5);
  CHECK(torch::equal(c.field[1], before[1]));  // no live slot: untouched
  CHECK((c.field[0] - before[0]).abs().max().item<float>() > 1e-4f);  // and a real pull elsewhere
}

TEST_CASE("attractor_record_ copies the field into the planned slot and nowhere else",
          "[ops][attractors]") {
  auto c = make_case();
  const auto bank_before = c.bank.clone();
  const auto slot = torch::tensor({int64_t{2}, int64_t{-1}, int64_t{0}});
  attractor_record_(c.bank, c.field, slot);
  CHECK(torch::equal(c.bank[0][2], c.field[0]));
  CHECK(torch::equal(c.bank[2][0], c.field[2]));
  CHECK(torch::equal(c.bank[1], bank_before[1]));  // slot -1: nothing stored
  for (int64_t j : {0, 1, 3}) CHECK(torch::equal(c.bank[0][j], bank_before[0][j]));
  // A strided slot column (a view of a facts table) is read with its stride.
  const auto table = torch::full({kB, 3}, int64_t{-1}, torch::kLong);
  table[1][1] = 3;
  attractor_record_(c.bank, c.field, table.select(1, 1));
  CHECK(torch::equal(c.bank[1][3], c.field[1]));
}

TEST_CASE("attractor_pull_ stores the source into the planned slot first, bit for bit as "
          "attractor_record_ then attractor_pull_ do",
          "[ops][attractors]") {
  // Robot 0 stores into a pulling slot, robot 1 into a slot that pulls nothing, robot 2 none.
  const auto slot = torch::tensor({int64_t{2}, int64_t{1}, int64_t{-1}});
  auto fused = make_case();
  auto apart = make_case();
  const auto bank_before = fused.bank.clone();
  attractor_pull_(fused.field, fused.bank, fused.weights, fused.workspace, fused.source, slot);
  attractor_record_(apart.bank, apart.source, slot);
  attractor_pull_(apart.field, apart.bank, apart.weights, apart.workspace, apart.source,
                  apart.no_store);
  CHECK(torch::equal(fused.bank[0][2], fused.source[0]));
  CHECK(torch::equal(fused.bank[1][1], fused.source[1]));
  CHECK(torch::equal(fused.bank[2], bank_before[2]));
  CHECK(torch::equal(fused.bank, apart.bank));
  CHECK(torch::equal(fused.field, apart.field));
  // The stored slot pulls with its new content: the field moved differently than with the old.
  auto old = make_case();
  attractor_pull_(old.field, old.bank, old.weights, old.workspace, old.source, old.no_store);
  CHECK((fused.field[0] - old.field[0]).abs().max().item<float>() > 1e-6f);
  CHECK(torch::equal(fused.field[2], old.field[2]));
}

TEST_CASE("The attractor operators refuse bad arguments with a message naming them",
          "[ops][attractors]") {
  auto c = make_case();
  auto bad_weights = torch::zeros({kB, kA, 3});
  CHECK_THROWS_WITH(attractor_pull_(c.field, c.bank, bad_weights, c.workspace, c.source, c.no_store),
                    Contains("weights"));
  auto bad_workspace = torch::zeros({kB, 3}, torch::kDouble);
  CHECK_THROWS_WITH(attractor_pull_(c.field, c.bank, c.weights, bad_workspace, c.source, c.no_store),
                    Contains("workspace"));
  auto strided_field = c.field.transpose(2, 3);
  CHECK_THROWS_WITH(
      attractor_pull_(strided_field, c.bank, c.weights, c.workspace, c.source, c.no_store),
      Contains("contiguous"));
  CHECK_THROWS_WITH(attractor_pull_(c.field, c.bank, c.weights, c.workspace,
                                    c.source.transpose(2, 3), c.no_store),
                    Contains("source"));
  CHECK_THROWS_WITH(attractor_pull_(c.field, c.bank, c.weights, c.workspace, c.source,
                                    torch::full({kB}, kA, torch::kLong)),
                    Contains("beyond"));
  auto other_bank = torch::zeros({kB, kA, 64, kR + 1, kR + 1, kR + 1});
  CHECK_THROWS_WITH(attractor_record_(other_bank, c.field, torch::zeros({kB}, torch::kLong)),
                    Contains("bank"));
  CHECK_THROWS_WITH(attractor_record_(c.bank, c.field, torch::zeros({kB}, torch::kInt)),
                    Contains("slot"));
  CHECK_THROWS_WITH(attractor_record_(c.bank, c.field, torch::full({kB}, kA, torch::kLong)),
                    Contains("beyond"));
}

TEST_CASE("The attractor operators create no tensor once warm", "[ops][attractors][allocation]") {
  auto c = make_case();
  const auto slot = torch::tensor({int64_t{1}, int64_t{-1}, int64_t{3}});
  attractor_record_(c.bank, c.field, slot);
  attractor_pull_(c.field, c.bank, c.weights, c.workspace, c.source, slot);  // warm: scratch grows
  AllocationCounter counter;
  for (int i = 0; i < 3; ++i) {
    attractor_record_(c.bank, c.field, slot);
    attractor_pull_(c.field, c.bank, c.weights, c.workspace, c.source, slot);
  }
  CHECK(counter.count() == 0);
}

TEST_CASE("On CUDA the attractor operators give what the CPU gives", "[ops][attractors][cuda]") {
  if (!fieldbrain::test::cuda_or_skip("attractor operators on CUDA")) return;
  auto cpu = make_case();
  auto gpu = make_case(torch::kCUDA);
  const auto slot = torch::tensor({int64_t{1}, int64_t{-1}, int64_t{3}});
  attractor_record_(cpu.bank, cpu.field, slot);
  attractor_record_(gpu.bank, gpu.field, slot.cuda());
  CHECK(torch::equal(cpu.bank, gpu.bank.cpu()));
  attractor_pull_(cpu.field, cpu.bank, cpu.weights, cpu.workspace, cpu.source, cpu.no_store);
  attractor_pull_(gpu.field, gpu.bank, gpu.weights, gpu.workspace, gpu.source, gpu.no_store);
  CHECK((cpu.field - gpu.field.cpu()).abs().max().item<float>() <= 1e-5f);
  // The pull's own store, then its pull from the stored slot.
  const auto store = torch::tensor({int64_t{0}, int64_t{2}, int64_t{-1}});
  attractor_pull_(cpu.field, cpu.bank, cpu.weights, cpu.workspace, cpu.source, store);
  attractor_pull_(gpu.field, gpu.bank, gpu.weights, gpu.workspace, gpu.source, store.cuda());
  CHECK(torch::equal(cpu.bank, gpu.bank.cpu()));
  CHECK((cpu.field - gpu.field.cpu()).abs().max().item<float>() <= 1e-5f);
}
