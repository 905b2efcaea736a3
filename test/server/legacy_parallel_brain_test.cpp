// The legacy profile steps a tick's robots in parallel, one robot per thread
// ("legacy_threads", app/server/engine/legacy_step_pool.h). Each robot must still be the
// original's brain of its run alone: a robot stepped among four on four threads gives, bit for
// bit, the motors and the field of the same robot stepped alone on one thread.
#include "test/support/catch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "app/server/engine/legacy_step_pool.h"
#include "app/server/engine/torch_brain_engine.h"
#include "brain/brain_config.h"
#include "test/support/skip.h"

using namespace fieldbrain::server;

namespace {

constexpr int kS = 12, kM = 6, kR = 16;

nlohmann::json legacy_brain(int threads) {
  // Rewards appended, so the reward attractors (the cycle's largest shared-looking state) run.
  return {{"profile", "legacy"}, {"resolution", kR},          {"seed", 42},
          {"legacy_reward", "append"}, {"legacy_threads", threads}};
}

// Robot r's input at cycle n: each robot its own stream, so a mix-up between robots shows.
void input_of(int robot, int64_t n, std::vector<float>& sensors, std::vector<float>& rewards) {
  for (int i = 0; i < kS; ++i) {
    sensors.push_back(0.6f * std::sin(0.15f * static_cast<float>(n) + 0.9f * robot + 0.5f * i));
  }
  rewards.push_back(0.8f * std::sin(0.25f * static_cast<float>(n) + robot));
}

std::vector<float> tick(BrainEngine& engine, const std::vector<BrainEngine::Slot>& slots,
                        const std::vector<int>& robots) {
  std::vector<float> sensors, rewards;
  for (size_t i = 0; i < slots.size(); ++i) input_of(robots[i], engine.cycle(slots[i]), sensors, rewards);
  return engine.step_group(slots, sensors, rewards);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The whole field, [x][y] planes of every channel and z, as the monitor reads it.
std::vector<float> whole_field(BrainEngine& engine, BrainEngine::Slot slot) {
  std::vector<float> out;
  for (int c = 0; c < 64; ++c) {
    for (int z = 0; z < kR; ++z) {
      for (const auto& row : engine.field_slice(slot, c, z).at("values")) {
        for (const auto& v : row) out.push_back(v.get<float>());
      }
    }
  }
  return out;
}

// Four robots stepped together on `threads` threads, each beside the same robot stepped alone
// on one thread in its own engine: every cycle's motors and the final field, bit for bit.
void check_four_robots_are_each_alone(int threads) {
  const std::vector<std::string> keys = {"rover-a", "rover-b", "rover-c", "rover-d"};
  auto busy = make_field_brain_engine(legacy_brain(threads));
  std::vector<BrainEngine::Slot> slots;
  for (const auto& key : keys) slots.push_back(busy->create(key, kS, kM));
  const std::vector<int> robots = {0, 1, 2, 3};

  // Each robot alone, one thread, its own engine.
  std::vector<std::unique_ptr<BrainEngine>> solo;
  std::vector<BrainEngine::Slot> alone;
  for (const auto& key : keys) {
    solo.push_back(make_field_brain_engine(legacy_brain(1)));
    alone.push_back(solo.back()->create(key, kS, kM));
  }

  constexpr int kCycles = 24;
  int differing_cycles = 0;
  bool robots_differ = false;
  for (int n = 0; n < kCycles; ++n) {
    const std::vector<float> together = tick(*busy, slots, robots);
    REQUIRE(together.size() == keys.size() * kM);
    for (size_t r = 0; r < keys.size(); ++r) {
      const std::vector<float> mine(together.begin() + static_cast<std::ptrdiff_t>(r * kM),
                                    together.begin() + static_cast<std::ptrdiff_t>((r + 1) * kM));
      const std::vector<float> by_itself = tick(*solo[r], {alone[r]}, {robots[r]});
      if (!same_bits(mine, by_itself)) ++differing_cycles;
      if (r > 0 && !same_bits(mine, std::vector<float>(together.begin(), together.begin() + kM))) {
        robots_differ = true;
      }
    }
  }
  CHECK(differing_cycles == 0);
  CHECK(robots_differ);  // four brains, not one brain's motors copied four times
  for (size_t r = 0; r < keys.size(); ++r) {
    INFO("robot " << keys[r]);
    CHECK(busy->cycle(slots[r]) == kCycles);
    CHECK(same_bits(whole_field(*busy, slots[r]), whole_field(*solo[r], alone[r])));
  }
}

}  // namespace

TEST_CASE("a legacy robot stepped among four on four threads is bit for bit the robot alone",
          "[server][legacy]") {
  check_four_robots_are_each_alone(4);
}

// Fewer threads than robots: each thread steps several robots of a tick, which ones changing
// from tick to tick (whoever claims first), and the calling thread steps its share.
TEST_CASE("a legacy robot stepped among four on two threads is bit for bit the robot alone",
          "[server][legacy]") {
  check_four_robots_are_each_alone(2);
}

TEST_CASE("a refused input in a parallel legacy tick leaves that robot untouched and names it",
          "[server][legacy]") {
  auto engine = make_field_brain_engine(legacy_brain(2));
  const std::vector<BrainEngine::Slot> slots = {engine->create("ok-1", kS, kM),
                                                engine->create("bad", kS, kM),
                                                engine->create("ok-2", kS, kM)};
  std::vector<float> sensors, rewards;
  for (int r = 0; r < 3; ++r) input_of(r, 0, sensors, rewards);
  sensors[kS + 3] = 20.0f;  // robot 1: outside the original's [-10, 10]
  try {
    engine->step_group(slots, sensors, rewards);
    FAIL("the refused input was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK_THAT(e.what(), Catch::Contains("robot 1 of the group"));
  }
  CHECK(engine->cycle(slots[0]) == 1);
  CHECK(engine->cycle(slots[1]) == 0);
  CHECK(engine->cycle(slots[2]) == 1);
}

TEST_CASE("legacy_threads is checked at start-up, naming the key", "[server][legacy][config]") {
  const auto error_of = [](const nlohmann::json& brain) -> std::string {
    try {
      (void)brain.get<fieldbrain::BrainConfig>();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  CHECK_THAT(error_of({{"profile", "legacy"}, {"legacy_threads", -1}}),
             Catch::Contains("brain.legacy_threads"));
  CHECK_THAT(error_of({{"profile", "legacy"}, {"legacy_threads", 5000}}),
             Catch::Contains("brain.legacy_threads"));
  CHECK_THAT(error_of({{"profile", "legacy"}, {"legacy_threads", "many"}}),
             Catch::Contains("legacy_threads"));
  // Without the legacy profile it would do nothing: refused.
  CHECK_THAT(error_of({{"legacy_threads", 2}}), Catch::Contains("brain.legacy_threads"));
  CHECK(error_of({{"profile", "legacy"}, {"legacy_threads", 3}}).empty());
  CHECK(error_of({{"profile", "legacy"}}).empty());  // default 0: the cores
}

// The pool under the engine (legacy_step_pool.h): runs of every size around its thread count,
// some where the helpers' tasks outlast the pool's spin (the caller then sleeps until they
// return), some after a pause longer than the spin (the helpers are asleep and must be woken).
TEST_CASE("the legacy step pool runs each task once per run and returns only after all have",
          "[server][legacy]") {
  LegacyStepPool pool(3, 1);
  REQUIRE(pool.threads() == 3);
  const std::thread::id caller = std::this_thread::get_id();
  constexpr int kMaxTasks = 13;
  std::vector<std::atomic<int>> calls(kMaxTasks);
  std::vector<std::atomic<bool>> returned(kMaxTasks);
  int wrong_counts = 0, returned_early = 0, slow_runs = 0, slow_helper_runs = 0;
  for (int run = 0; run < 3000; ++run) {
    const int n = 1 + run % kMaxTasks;
    for (int i = 0; i < kMaxTasks; ++i) {
      calls[static_cast<size_t>(i)] = 0;
      returned[static_cast<size_t>(i)] = false;
    }
    // Every 250th run (n >= 2): a helper's task takes 3 ms, and the caller's tasks wait (at most
    // a second) until a helper has started one, so it cannot run them all itself.
    const bool slow_helpers = run % 250 == 7 && n >= 2;  // one task: run inline, no helper
    if (slow_helpers) ++slow_runs;
    std::atomic<bool> helper_started{false};
    auto task = [&](int64_t i) {
      ++calls[static_cast<size_t>(i)];
      if (slow_helpers && std::this_thread::get_id() != caller) {
        helper_started = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
      } else if (slow_helpers) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (!helper_started && std::chrono::steady_clock::now() < until) {
          std::this_thread::yield();
        }
      }
      returned[static_cast<size_t>(i)] = true;
    };
    if (run % 250 == 23) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    pool.run(n, task);
    if (helper_started) ++slow_helper_runs;
    for (int i = 0; i < kMaxTasks; ++i) {
      if (calls[static_cast<size_t>(i)] != (i < n ? 1 : 0)) ++wrong_counts;
      if (i < n && !returned[static_cast<size_t>(i)]) ++returned_early;
    }
  }
  CHECK(wrong_counts == 0);
  CHECK(returned_early == 0);
  CHECK(slow_runs > 0);
  CHECK(slow_helper_runs == slow_runs);  // a helper took part in each
}

// float32 results depend on the SSE control word (rounding, flush-to-zero), which is per thread:
// a helper must compute with the caller's, whatever it computed with before.
TEST_CASE("every task of the legacy step pool runs with the caller's floating-point control word",
          "[server][legacy]") {
#if defined(__x86_64__) || defined(__i386__)
  LegacyStepPool pool(4, 1);
  const unsigned usual = _mm_getcsr();
  // Round toward zero, flush-to-zero and denormals-are-zero on: no thread starts that way.
  const unsigned unusual = (usual & ~0x6000u) | 0x6000u | 0x8040u;
  REQUIRE(unusual != usual);
  for (const unsigned word : {unusual, usual}) {
    INFO("control word " << std::hex << word);
    constexpr int kTasks = 8;
    std::vector<unsigned> seen(kTasks, 0);
    std::vector<std::thread::id> by(kTasks);
    std::atomic<int> started{0};
    auto task = [&](int64_t i) {
      seen[static_cast<size_t>(i)] = _mm_getcsr();
      by[static_cast<size_t>(i)] = std::this_thread::get_id();
      // Hold each task until another thread has started one (or a second has passed), so the
      // helpers take part instead of the caller running all eight.
      ++started;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      while (started < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    };
    _mm_setcsr(word);
    pool.run(kTasks, task);
    _mm_setcsr(usual);
    CHECK(std::count(seen.begin(), seen.end(), word) == kTasks);
    std::sort(by.begin(), by.end());
    CHECK(std::unique(by.begin(), by.end()) - by.begin() >= 2);
  }
#else
  FIELDBRAIN_SKIP("the SSE control word exists on x86 only");
#endif
}
