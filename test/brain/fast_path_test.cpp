// The fast path (config.field_step = "fast": the fused fieldbrain::field_step operator) against
// the reference path (plain ATen ops), whole cycles side by side; and what a fast cycle costs
// in steady state: no allocation reaching the system, one device-to-host copy.
#include "test/support/catch.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "app/bench/reward_schedule.h"
#include "brain/field_brain.h"
#include "brain/ops/allocation_counter.h"
#include "brain/ops/caching_allocator.h"
#include "brain/sync_counter.h"
#include "test/brain/brain_state.h"

namespace fieldbrain::test {
namespace {

constexpr double kFastTolerance = 1e-4;

BrainConfig config_with(int64_t R, const std::string& field_step) {
  BrainConfig c;  // the defaults: S = 24, M = 4, 8 attractor slots
  c.resolution = R;
  c.field_step = field_step;
  return c;
}

// Inputs of cycle i: the smooth test stream with rewards, and a stretch of silence for robot 0
// (the no-input path: imprint skipped, cycles without input counted).
torch::Tensor sensors_of(int64_t i, const std::vector<uint64_t>& keys, int64_t S) {
  auto s = test_sensors(i, keys, S);
  if (i >= 120 && i < 150) s[0].zero_();
  return s;
}

// max |a - b| of two float tensors, in float: where a and b are within a factor 2 of each other
// (all that matters against a 1e-4 tolerance) a - b is exact in float (Sterbenz), so this
// reports the same worst difference as max_diff's double arithmetic without converting two
// 8.4M-element fields to double every cycle.
double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs_().max().item<double>();
}

// Both paths from the same seed and inputs, compared after every cycle (motors and the whole
// field). The reference step is slow (~0.2 s per robot at R = 32 on 2 quiet threads; under
// load its OpenMP threads must not spin: test/brain/CMakeLists.txt), so this uses every
// hardware thread.
using RewardStream = torch::Tensor (*)(int64_t cycle, const std::vector<uint64_t>& keys);

// A learning robot's reward: every cycle the bench's schedule (app/bench/reward_schedule.h, a
// sinusoid of amplitude 0.5 and period 64 that crosses |r| = 0.1 both ways four times a period,
// of both signs), robot b shifted by 5b cycles: nearly every cycle stores a slot, all 8 slots
// pull, and each is overwritten while it still pulls (from cycle ~10 on).
torch::Tensor reward_every_cycle(int64_t cycle, const std::vector<uint64_t>& keys) {
  auto t = torch::zeros({static_cast<int64_t>(keys.size())}, torch::kFloat);
  for (size_t b = 0; b < keys.size(); ++b) t[b] = bench::scheduled_reward(cycle, static_cast<int64_t>(b));
  return t;
}

// How close the reference's closest pooled cell came to the activity threshold in the cycle
// that ended with field_end and the motors `motors` (docs/cycle.md step 8): its pooling input
// is the field before step 11's motor echo, which scaled channels 62-63 by 0.95 and added the
// motors' terms; undone here in double. Cells: adaptive_avg_pool3d(|F|, 4) averaged over the
// 64 channels; threshold max(0.01, 0.8 mean|F|).
double pooling_margin(const torch::Tensor& field_end, const torch::Tensor& motors, int64_t b) {
  auto F = field_end[b].to(torch::kDouble).clone();  // [64, R, R, R]
  const int64_t R = F.size(1);
  const auto m = motors[b].to(torch::kDouble);
  const auto lin = torch::linspace(-1, 1, R, torch::kDouble);
  F[62] = (F[62] - 0.3 * (m[0] * lin.view({1, 1, R}) + m[1] * lin.view({1, R, 1}))) / 0.95;
  F[63] = (F[63] - 0.2 * m.abs().mean()) / 0.95;
  const auto absF = F.abs();
  const auto cells = torch::adaptive_avg_pool3d(absF.unsqueeze(0), {4, 4, 4}).mean(1).flatten();
  const double threshold = std::max(0.01, 0.8 * absF.mean().item<double>());
  return (cells - threshold).abs().min().item<double>();
}

void follow_reference(int64_t R, int64_t B, int cycles, RewardStream reward = test_reward) {
  // The reference path's temporaries at R = 32, B = 4 (33.5 MB a field) are above glibc's
  // largest mmap threshold (32 MB), so each was a fresh mapping the kernel zeroed page by page:
  // a third of this test's time. The server's pool keeps them for the next cycle instead; the
  // numbers are the same (an allocator hands out memory, it computes nothing).
  ops::CachingCpuAllocator::install();
  const int threads_before = at::get_num_threads();
  at::set_num_threads(static_cast<int>(std::max(2u, std::thread::hardware_concurrency())));
  std::vector<uint64_t> keys;
  for (int64_t b = 0; b < B; ++b) keys.push_back(static_cast<uint64_t>(10 + 3 * b));
  auto reference = make_brain(config_with(R, "reference"), keys);
  auto fast = make_brain(config_with(R, "fast"), keys);
  REQUIRE(torch::equal(reference->field(), fast->field()));  // same construction draws
  double worst_field = 0.0, worst_motors = 0.0;
  int ties = 0;  // cycles whose active cells differ at a tie (below)
  for (int i = 0; i < cycles; ++i) {
    const auto s = sensors_of(i, keys, 24);
    const auto r = reward(i, keys);
    const auto m_ref = reference->step(s, r);
    const auto m_fast = fast->step(s, r);
    const double dm = max_abs_diff(m_ref, m_fast);
    const double df = max_abs_diff(reference->field(), fast->field());
    worst_motors = std::max(worst_motors, dm);
    worst_field = std::max(worst_field, df);
    INFO("cycle " << i << ": motors differ by " << dm << ", fields by " << df);
    REQUIRE(dm <= kFastTolerance);
    REQUIRE(df <= kFastTolerance);
    // The statistics the fast path takes from the fused read-out (steps 5 and 8-9): active
    // cells exactly, confidence and smoothed information within the tolerance. A cell's
    // activity and the threshold are means of |F|, so each path's differ from the other's by
    // at most the fields' largest difference: the counts must agree unless a cell of the
    // reference lay within twice that (plus this recovery's rounding) of the threshold, a tie
    // the 1e-4 contract leaves open (R = 32, robot 10, cycle 142: a cell 6.5e-9 from it).
    for (int64_t b = 0; b < B; ++b) {
      const auto t_ref = reference->telemetry(b), t_fast = fast->telemetry(b);
      INFO("robot " << b);
      if (t_fast["active_cells"] != t_ref["active_cells"]) {
        const double margin = pooling_margin(reference->field(), m_ref, b);
        INFO("active cells " << t_fast["active_cells"] << " vs " << t_ref["active_cells"]
                             << ", the reference's closest cell " << margin
                             << " from its threshold");
        REQUIRE(margin <= 2.2 * df + 1e-6);
        ++ties;
      }
      for (const char* key :
           {"prediction_confidence", "smoothed_information", "exploration_drive"}) {
        INFO(key);
        REQUIRE(std::abs(t_fast[key].get<double>() - t_ref[key].get<double>()) <= kFastTolerance);
      }
    }
  }
  at::set_num_threads(threads_before);
  WARN("R=" << R << " B=" << B << " cycles=" << cycles << (reward == test_reward ? "" : " (rewarded every cycle, some or all robots)")
            << ": worst max|diff| motors "
            << worst_motors << ", field " << worst_field << ", active cells at a tie in " << ties
            << " robot-cycles");
}

}  // namespace

TEST_CASE("The fast path follows the reference path for 200 cycles at R=16, B=1", "[brain][parity]") {
  follow_reference(16, 1, 200);
}
TEST_CASE("The fast path follows the reference path for 200 cycles at R=16, B=4", "[brain][parity]") {
  follow_reference(16, 4, 200);
}
TEST_CASE("The fast path follows the reference path for 200 cycles at R=32, B=1",
          "[brain][parity][slow]") {
  follow_reference(32, 1, 200);
}

TEST_CASE("Under a reward every cycle the fast path follows the reference path for 200 cycles at R=16, B=1",
          "[brain][parity][reward]") {
  follow_reference(16, 1, 200, reward_every_cycle);
}
TEST_CASE("Under a reward every cycle the fast path follows the reference path for 200 cycles at R=16, B=4",
          "[brain][parity][reward]") {
  follow_reference(16, 4, 200, reward_every_cycle);
}
TEST_CASE("Under a reward every cycle the fast path follows the reference path for 200 cycles at R=32, B=1",
          "[brain][parity][reward][slow]") {
  follow_reference(32, 1, 200, reward_every_cycle);
}
// R = 32, B = 4 holds both streams in one batch (the reference costs ~0.1 s a robot-cycle there,
// so two separate runs would cost the test command two minutes more): robots 0 and 1 get the
// sparse test rewards (robot 0 also its silence), robots 2 and 3 a reward every cycle. So in
// one cycle some robots store and pull while others only pull or do neither, as in a server.
TEST_CASE("The fast path follows the reference path for 200 cycles at R=32, B=4, two of the robots under a reward every cycle",
          "[brain][parity][reward][slow]") {
  follow_reference(32, 4, 200, [](int64_t cycle, const std::vector<uint64_t>& keys) {
    auto sparse = test_reward(cycle, keys), every = reward_every_cycle(cycle, keys);
    sparse.slice(0, 2, 4).copy_(every.slice(0, 2, 4));
    return sparse;
  });
}

TEST_CASE("On the fast path a robot's trajectory is the same alone and inside a batch", "[brain]") {
  // The fused operators reduce each robot's field on its own: batching changes no bit.
  const int threads_before = at::get_num_threads();
  at::set_num_threads(GENERATE(1, 2));
  CAPTURE(at::get_num_threads());
  const auto config = config_with(8, "fast");
  const std::vector<uint64_t> keys{11, 12, 13};
  auto batch = make_brain(config, keys);
  auto alone = make_brain(config, {12});
  for (int64_t i = 0; i < 60; ++i) {
    auto s = sensors_of(i, keys, 24);
    if (i >= 20 && i < 30) s[1].zero_();  // the robot compared, silent for a while
    const auto r = test_reward(i, keys);
    const auto mb = batch->step(s, r);
    const auto ma = alone->step(s.slice(0, 1, 2), r.slice(0, 1, 2));
    INFO("cycle " << i);
    REQUIRE(torch::equal(mb.slice(0, 1, 2), ma));
  }
  CHECK(torch::equal(batch->field().slice(0, 1, 2), alone->field()));
  for (const char* name : {"prediction.pred", "pooling.active", "pooling.temporal"}) {
    INFO(name);
    CHECK(torch::equal(buffer(*batch, name).slice(0, 1, 2), buffer(*alone, name)));
  }
  at::set_num_threads(threads_before);
}

TEST_CASE("On the fast path a robot's trajectory is the same on one thread and on two",
          "[brain][threads]") {
  // The fused CPU kernels split their loops over the intra-op threads (at::parallel_for, which
  // runs them on the calling thread alone unless the kernels are built with OpenMP:
  // brain/ops/CMakeLists.txt); each robot's sums keep one order whatever the split. R = 32
  // (a channel per task at least), rewarded every cycle so that the attractor bank pulls.
  const int threads_before = at::get_num_threads();
  const auto config = config_with(32, "fast");
  const std::vector<uint64_t> keys{11, 12};
  auto one = make_brain(config, keys);
  auto two = make_brain(config, keys);
  for (int64_t i = 0; i < 24; ++i) {
    const auto s = sensors_of(i, keys, 24);
    const auto r = reward_every_cycle(i, keys);
    at::set_num_threads(1);
    const auto m1 = one->step(s, r);
    at::set_num_threads(2);
    const auto m2 = two->step(s, r);
    INFO("cycle " << i);
    REQUIRE(torch::equal(m1, m2));
    REQUIRE(torch::equal(one->field(), two->field()));
    auto t1 = one->telemetry(0), t2 = two->telemetry(0);
    t1.erase("cycle_time_ms");  // the host's clock
    t2.erase("cycle_time_ms");
    REQUIRE(t1 == t2);
  }
  at::set_num_threads(threads_before);
}

TEST_CASE("A steady fast cycle stepped into the caller's motor buffer creates no tensor at all",
          "[brain][allocation]") {
  const int64_t B = GENERATE(1, 3);
  CAPTURE(B);
  std::vector<uint64_t> keys;
  for (int64_t b = 0; b < B; ++b) keys.push_back(static_cast<uint64_t>(5 + b));
  auto brain = make_brain(config_with(16, "fast"), keys);
  // Every kind of cycle, made before counting: input, silence, rewards of both signs (slots
  // stored, aged, pulling).
  constexpr int kPeriod = 14;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> inputs;
  for (int i = 0; i < kPeriod; ++i) {
    auto s = test_sensors(i, keys, 24);
    if (i == 5) s.zero_();
    inputs.emplace_back(s, test_reward(i, keys));
  }
  auto motors = torch::empty({B, 4});
  for (int i = 0; i < 2 * kPeriod; ++i) {
    const auto& [s, r] = inputs[i % kPeriod];
    brain->step_into(s, r, motors);
  }
  ops::AllocationCounter requests;
  const auto syncs_before = SyncCounter::count();
  for (int i = 0; i < kPeriod; ++i) brain->step_into(inputs[i].first, inputs[i].second, motors);
  CHECK(requests.count() == 0);
  CHECK(SyncCounter::count() - syncs_before == kPeriod);
  // The buffer holds this cycle's motors: the same as step() returns for a twin brain.
  auto twin = make_brain(config_with(16, "fast"), keys);
  torch::Tensor last;
  for (int i = 0; i < 3 * kPeriod; ++i) {
    const auto& [s, r] = inputs[i % kPeriod];
    last = twin->step(s, r);
  }
  CHECK(torch::equal(last, motors));
}

TEST_CASE("A steady fast cycle under a reward every cycle creates no tensor and syncs once",
          "[brain][allocation][reward]") {
  const int64_t R = GENERATE(16, 32);
  const int64_t B = GENERATE(1, 3);
  CAPTURE(R, B);
  std::vector<uint64_t> keys;
  for (int64_t b = 0; b < B; ++b) keys.push_back(static_cast<uint64_t>(7 + b));
  auto brain = make_brain(config_with(R, "fast"), keys);
  // One reward period before counting: every slot stored, pulling and reused, of both signs.
  constexpr int64_t kPeriod = bench::kRewardPeriod;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> inputs;
  for (int64_t i = 0; i < kPeriod; ++i) inputs.emplace_back(test_sensors(i, keys, 24), reward_every_cycle(i, keys));
  auto motors = torch::empty({B, 4});
  for (int64_t i = 0; i < kPeriod; ++i) brain->step_into(inputs[i].first, inputs[i].second, motors);
  for (int64_t b = 0; b < B; ++b) REQUIRE(brain->telemetry(b)["attractors"] == 8);  // the bank is full
  // Counted: cycles 28..43 of the period, where robot 0's reward falls through 0.1 (stores
  // stop at 30) and comes back as a punishment (35): stores, skipped stores, both signs.
  constexpr int64_t kFirst = 28, kCounted = 16;
  ops::AllocationCounter requests;
  const auto syncs_before = SyncCounter::count();
  for (int64_t i = kFirst; i < kFirst + kCounted; ++i) brain->step_into(inputs[i].first, inputs[i].second, motors);
  CHECK(requests.count() == 0);
  CHECK(SyncCounter::count() - syncs_before == kCounted);
}

TEST_CASE("step_into refuses a motor buffer of the wrong shape, type or device and steps nothing",
          "[brain]") {
  const std::vector<uint64_t> keys{1, 2};
  auto brain = make_brain(config_with(8, "fast"), keys);
  const auto s = test_sensors(0, keys, 24);
  const auto r = test_reward(0, keys);
  const auto field_before = brain->field().clone();
  for (auto bad : {torch::empty({2, 5}), torch::empty({2, 4}, torch::kDouble),
                   torch::empty({4, 2}).t(), torch::Tensor()}) {
    CHECK_THROWS_WITH(brain->step_into(s, r, bad), Catch::Contains("motors must be"));
  }
  CHECK(brain->cycle() == 0);
  CHECK(torch::equal(brain->field(), field_before));
}

TEST_CASE("In steady state a fast cycle allocates nothing from the system and syncs once",
          "[brain][allocation]") {
  auto& pool = ops::CachingCpuAllocator::install();
  const int64_t R = GENERATE(16, 32);
  const int64_t B = GENERATE(1, 3);
  CAPTURE(R, B);
  std::vector<uint64_t> keys;
  for (int64_t b = 0; b < B; ++b) keys.push_back(static_cast<uint64_t>(b));
  auto brain = make_brain(config_with(R, "fast"), keys);
  // Steady state: every kind of cycle has been seen (inputs, silence, rewards of both signs,
  // attractor slots filling), so the pool holds a block for every size a cycle asks for.
  constexpr int kPeriod = 14;  // test_reward's period (7) x the sign alternation (2)
  auto inputs = [&](int i) {
    auto s = test_sensors(i % kPeriod, keys, 24);
    if (i % kPeriod == 5) s.zero_();
    return std::make_pair(s, test_reward(i % kPeriod, keys));
  };
  for (int i = 0; i < 2 * kPeriod; ++i) {
    const auto [s, r] = inputs(i);
    brain->step(s, r);
  }

  {  // positive control: a size the pool has never seen reaches the system
    const auto before = pool.stats().system_allocations;
    auto probe = torch::empty({1000003 + 1000 * R + 200 * B});  // distinct per section
    REQUIRE(pool.stats().system_allocations == before + 1);
  }

  ops::AllocationCounter requests;  // tensor buffers the ATen ops still ask for
  const auto stats_before = pool.stats();
  const auto syncs_before = SyncCounter::count();
  for (int i = 0; i < kPeriod; ++i) {
    const auto [s, r] = inputs(2 * kPeriod + i);
    brain->step(s, r);
  }
  const auto stats_after = pool.stats();
  CHECK(stats_after.system_allocations - stats_before.system_allocations == 0);
  CHECK(SyncCounter::count() - syncs_before == kPeriod);
  CHECK(stats_after.in_use_bytes == stats_before.in_use_bytes);  // nothing leaks across cycles
  WARN("R=" << R << " B=" << B << ": " << requests.count() / kPeriod
            << " tensor buffers per cycle, all served from the pool ("
            << stats_after.cached_bytes / (1 << 20) << " MiB cached)");
}

}  // namespace fieldbrain::test
