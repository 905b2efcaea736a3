// The save-storm measurement shared by the toy-brain and real-brain tests: one framing-B robot
// cycles as fast as it can while, for a second window, a monitor client asks `save` 20 times a
// second; the cycles of the two windows are compared by the caller.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "app/server/protocol/robot_client.h"

namespace fieldbrain::server::testing {

struct SaveStormCounts {
  bool warmed_up = false;  // the robot passed `warmup_cycles` in time
  int calm = 0;            // robot cycles in the window without saves
  int stormy = 0;          // robot cycles in the window with the save storm
  int requests = 0;        // save requests answered during the storm
};

inline SaveStormCounts measure_save_storm(uint16_t port, uint16_t monitor_port,
                                          const std::vector<float>& capabilities,
                                          const std::vector<float>& sensors, int warmup_cycles,
                                          double window_s) {
  std::atomic<bool> stop{false};
  std::atomic<int> cycles{0};
  std::thread robot([&] {
    RobotClient r(port, 30.0);
    if (!r.handshake(Framing::B, capabilities)) return;
    while (!stop && r.exchange(Framing::B, sensors)) ++cycles;
  });
  auto count_over = [&](double seconds) {
    const int before = cycles.load();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    return cycles.load() - before;
  };
  SaveStormCounts out;
  // Past the first cycles (the allocator pool and LibTorch's threads warm up).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (cycles.load() <= warmup_cycles && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  out.warmed_up = cycles.load() > warmup_cycles;
  if (out.warmed_up) {
    out.calm = count_over(window_s);
    std::atomic<bool> storm_on{true};
    std::atomic<int> requests{0};
    std::thread storm([&] {
      RobotClient m(monitor_port);
      // 20 requests a second: each would cost the brain thread a whole save if saves ran there
      // (the pace keeps the storm's own CPU use from being what is measured on a busy machine).
      while (storm_on) {
        m.send_text("save\n");
        if (!m.read_line()) break;
        ++requests;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
    out.stormy = count_over(window_s);
    storm_on = false;
    storm.join();
    out.requests = requests.load();
  }
  stop = true;
  robot.join();
  return out;
}

// The measurement repeated until one pair of windows shows the rate kept (stormy >= keep *
// calm, with more than 10 save requests answered), at most `attempts` times; the last pair
// when none does. A busy machine (other builds, other tests) can starve one window and not the
// other, so one pair alone measures the machine; saves that ran on the brain thread would slow
// every pair (each storm asks for far more saves than the window has time for).
inline SaveStormCounts measure_save_storm_kept(uint16_t port, uint16_t monitor_port,
                                               const std::vector<float>& capabilities,
                                               const std::vector<float>& sensors,
                                               int warmup_cycles, double window_s, double keep,
                                               int attempts = 5) {
  SaveStormCounts n;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    n = measure_save_storm(port, monitor_port, capabilities, sensors, warmup_cycles, window_s);
    std::printf("save storm, pair %d: %d cycles calm, %d during %d save requests\n", attempt,
                n.calm, n.stormy, n.requests);
    if (!n.warmed_up || (n.requests > 10 && n.stormy >= keep * n.calm)) break;
  }
  return n;
}

}  // namespace fieldbrain::server::testing
