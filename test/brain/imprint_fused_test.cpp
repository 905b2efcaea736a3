// The fused imprint (fieldbrain::sensory_imprint_, the fast path of docs/cycle.md step 4)
// against the module's ATen method, cycle by cycle on a small batch: silence, repeated and new
// patterns, a field prepared so that the resonant location wins, rewards of both signs; its
// steady-state call creates no tensor; and the CUDA kernel against the CPU kernel.
#include "test/support/catch.h"
#include <map>
#include <string>

#include "brain/cycle_facts.h"
#include "brain/ops/allocation_counter.h"
#include "brain/ops/field_step.h"
#include "brain/ops/philox.h"
#include "brain/sensory_imprint.h"
#include "brain/sensory_imprint_fused.h"
#include "test/support/devices.h"

namespace fieldbrain::test {
namespace {

constexpr int64_t kImprintB = 3, kImprintS = 24, kImprintR = 16;

// One imprint module (the ATen or the fused one) with its field, fact tables and drive, on one
// device.
struct ImprintSide {
  ImprintSide(const std::string& device, bool fused) : dev(device) {
    const auto options = SensoryImprintOptions(kImprintB, kImprintS, kImprintR).device(dev);
    if (fused) {
      fused_imprint = FusedSensoryImprint(options);
      imprint = fused_imprint.ptr();
    } else {
      aten_imprint = SensoryImprint(options);
      imprint = aten_imprint.ptr();
    }
    facts.allocate(kImprintB, kImprintS, dev);
  }
  torch::Device dev;
  SensoryImprint aten_imprint{nullptr};
  FusedSensoryImprint fused_imprint{nullptr};
  std::shared_ptr<SensoryImprintState> imprint;  // whichever of the two
  CycleFacts facts;
  torch::Tensor field, key, eps;
  std::vector<torch::Tensor> drive;  // conf, has_ef, boost, prev_imp, prev_amp
  torch::Tensor strength;
  CycleContext ctx;

  // Loads the cycle's inputs (CPU tensors) the way run_cycle does.
  void load(const torch::Tensor& sensors, const torch::Tensor& reward,
            const std::vector<torch::Tensor>& drive_cpu, const torch::Tensor& key_cpu) {
    ctx = CycleContext{};
    ctx.batch = kImprintB;
    ctx.has_input.resize(kImprintB);
    ctx.skip_imprint.resize(kImprintB);
    facts.sensors_host.copy_(sensors);
    for (int64_t b = 0; b < kImprintB; ++b) {
      const bool in = sensors[b].abs().max().item<float>() > 0.01f;
      ctx.has_input[b] = in;
      ctx.skip_imprint[b] = !in;
      int64_t* f = facts.row(b);
      f[kFactHasInput] = in ? 1 : 0;
      f[kFactMapCount] = imprint->map->count(b);
      facts.values_row(b)[kValueReward] = reward[b].item<float>();
    }
    facts.upload();
    ctx.facts = facts.device;
    ctx.value_facts = facts.values;
    ctx.sensors = facts.sensors;
    ctx.reward_d = facts.values.select(1, kValueReward);
    drive.clear();
    for (const auto& t : drive_cpu) drive.push_back(t.to(dev));
    key = key_cpu.to(dev);
    // The ATen form reads eps_loc as run_cycle's reference path draws it; the fused form
    // draws the same numbers from the key itself.
    eps = torch::zeros({kImprintB, kImprintR, kImprintR, kImprintR}, torch::TensorOptions(torch::kFloat).device(dev));
    ops::philox_normal_out(key, philox::kStreamEmptyLocation, eps);
  }
  void step() {
    const ImprintDrive d{drive[0], drive[1], drive[2], drive[3], drive[4]};
    strength = fused_imprint ? fused_imprint->apply(ctx, field, d, key)
                             : aten_imprint->apply(ctx, field, d, eps);
  }
};

// Which strategy the step just used for robot b, from the ATen side's state before and after:
// "empty" marks occ; "existing" reuses the place of a remembered pattern with cosine > 0.9;
// anything else is the resonant place.
std::string strategy_of(ImprintSide& side, const torch::Tensor& occ_before,
                        const torch::Tensor& map_before, int64_t b) {
  const int64_t count = side.imprint->map->count(b);
  const int64_t slot = (count - 1) % 100;
  const auto loc = side.imprint->map_loc[b][slot];
  const auto flat = (loc[0] * kImprintR * kImprintR + loc[1] * kImprintR + loc[2]).item<int64_t>();
  if (!side.imprint->occ[b].view(-1)[flat].equal(occ_before[b].view(-1)[flat])) return "empty";
  const auto p = side.imprint->map->data[b][slot];
  for (int64_t j = 0; j < std::min<int64_t>(count - 1, 100); ++j) {
    const float cos = torch::cosine_similarity(p, map_before[b][j], 0, 1e-8).item<float>();
    if (cos > 0.9f && side.imprint->map_loc[b][j].equal(loc)) return "existing";
  }
  return "resonant";
}

// Inputs of cycle i: robot 0 alternates two fixed patterns (remembered places), robot 1 is
// silent every third cycle, robot 2 gets a new pattern every cycle; rewards change sign.
// (Robot 1's content channels start negative: its positive patterns find no resonant place.)
torch::Tensor sensors_at(int64_t i, const torch::Tensor& fixed) {
  auto s = torch::rand({kImprintB, kImprintS});
  s[0].copy_(fixed[i % 2]);
  if (i % 3 == 0) s[1].zero_();
  return s;
}

// (seed, cycle) per robot at cycle i.
torch::Tensor noise_key_at(int64_t i) {
  auto key = torch::zeros({kImprintB, 2}, torch::kLong);
  for (int64_t b = 0; b < kImprintB; ++b) {
    key[b][0] = 1000 + 17 * b;
    key[b][1] = i;
  }
  return key;
}

}  // namespace

TEST_CASE("The fused imprint follows the ATen imprint cycle by cycle", "[brain][fused]") {
  torch::manual_seed(5);
  ImprintSide aten("cpu", false), fused("cpu", true);
  const auto start = torch::randn({kImprintB, 64, kImprintR, kImprintR, kImprintR}) * 0.3;
  start[1].slice(0, 0, 8).abs_().add_(0.5).neg_();
  aten.field = start.clone();
  fused.field = start.clone();
  const auto fixed = torch::rand({2, kImprintS});
  std::map<std::string, int> used;
  for (int64_t i = 0; i < 14; ++i) {
    CAPTURE(i);
    const auto sensors = sensors_at(i, fixed);
    const auto reward = torch::rand({kImprintB}) * 2 - 1;
    const std::vector<torch::Tensor> drive{
        torch::rand({kImprintB}), (torch::rand({kImprintB}) > 0.5).to(torch::kFloat), torch::rand({kImprintB}) + 1,
        torch::rand({kImprintB}) * 0.8 + 0.1, torch::rand({kImprintB}) * 0.5 + 1};
    const auto key = noise_key_at(i);
    if (i % 4 == 2) {
      // Robot 2's content channels follow its projected pattern: the resonant place wins.
      const auto a = sensors.slice(0, 2, 3);
      const auto proj = aten.aten_imprint->project(a / a.norm()).view({kImprintR, kImprintR, kImprintR});
      for (auto* side : {&aten, &fused}) side->field[2].slice(0, 0, 8).add_(proj * 4);
    }
    aten.load(sensors, reward, drive, key);
    fused.load(sensors, reward, drive, key);
    const auto occ_before = aten.imprint->occ.clone();
    const auto map_before = aten.imprint->map->data.clone();
    aten.step();
    fused.step();
    for (int64_t b = 0; b < kImprintB; ++b) {
      if (aten.ctx.has_input[b]) ++used[strategy_of(aten, occ_before, map_before, b)];
      CHECK(aten.imprint->map->count(b) == fused.imprint->map->count(b));
    }
    CHECK(fused.strength.allclose(aten.strength, 0, 1e-6));
    CHECK((fused.field - aten.field).abs().max().item<double>() <= 1e-5);
    CHECK(fused.imprint->occ.equal(aten.imprint->occ));
    CHECK(fused.imprint->map_loc.equal(aten.imprint->map_loc));
    CHECK(fused.imprint->map->data.allclose(aten.imprint->map->data, 0, 1e-6));
  }
  CAPTURE(used["existing"], used["resonant"], used["empty"]);
  CHECK(used["existing"] > 0);
  CHECK(used["resonant"] > 0);
  CHECK(used["empty"] > 0);
  // A silent robot is left alone: strength 0 and no push.
  CHECK(fused.imprint->map->count(1) < fused.imprint->map->count(2));
}

TEST_CASE("The fused imprint creates no tensor in steady state", "[brain][fused]") {
  torch::manual_seed(6);
  ImprintSide fused("cpu", true);
  fused.field = torch::randn({kImprintB, 64, kImprintR, kImprintR, kImprintR}) * 0.3;
  const std::vector<torch::Tensor> drive{torch::rand({kImprintB}), torch::zeros({kImprintB}), torch::ones({kImprintB}),
                                         torch::full({kImprintB}, 0.5), torch::ones({kImprintB})};
  fused.load(torch::rand({kImprintB, kImprintS}), torch::zeros({kImprintB}), drive, noise_key_at(0));
  fused.step();  // first call: the dispatcher's lookups
  ops::AllocationCounter counter;
  for (int k = 0; k < 3; ++k) fused.step();
  CHECK(counter.count() == 0);
}

TEST_CASE("The CUDA imprint kernel follows the CPU kernel", "[cuda][brain][fused]") {
  if (!cuda_or_skip("fused imprint CUDA vs CPU")) return;
  torch::manual_seed(7);
  ImprintSide cpu("cpu", true), gpu("cuda", true);
  const auto start = torch::randn({kImprintB, 64, kImprintR, kImprintR, kImprintR}) * 0.3;
  cpu.field = start.clone();
  gpu.field = start.to(gpu.dev);
  const auto fixed = torch::rand({2, kImprintS});
  for (int64_t i = 0; i < 14; ++i) {
    CAPTURE(i);
    const auto sensors = sensors_at(i, fixed);
    const auto reward = torch::rand({kImprintB}) * 2 - 1;
    const std::vector<torch::Tensor> drive{
        torch::rand({kImprintB}), (torch::rand({kImprintB}) > 0.5).to(torch::kFloat), torch::rand({kImprintB}) + 1,
        torch::rand({kImprintB}) * 0.8 + 0.1, torch::rand({kImprintB}) * 0.5 + 1};
    const auto key = noise_key_at(i);
    cpu.load(sensors, reward, drive, key);
    gpu.load(sensors, reward, drive, key);
    cpu.step();
    gpu.step();
    CHECK(gpu.strength.cpu().allclose(cpu.strength, 0, 1e-6));
    CHECK((gpu.field.cpu() - cpu.field).abs().max().item<double>() <= 1e-5);
    CHECK(gpu.imprint->occ.cpu().equal(cpu.imprint->occ));
    CHECK(gpu.imprint->map_loc.cpu().equal(cpu.imprint->map_loc));
    CHECK(gpu.imprint->map->data.cpu().allclose(cpu.imprint->map->data, 0, 1e-6));
  }
}

}  // namespace fieldbrain::test
