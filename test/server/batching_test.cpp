// 16 robots at once, 500 cycles each: every request answered once, in order, with its own
// brain's motors; robots that share (S, M) are batched (fewer brain calls than frames).
#include "test/support/catch.h"
#include <thread>

#include "app/server/protocol/robot_client.h"
#include "test/server/toy_engine.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;

TEST_CASE("16 robots x 500 cycles: answered in order and batched", "[server]") {
  ToyServer srv;
  srv.engine.delay_ms = 1;  // a brain call costs time, so frames queue up and get batched
  constexpr int kRobots = 16, kCycles = 500;
  std::vector<std::string> failures(kRobots);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRobots; ++r) {
    threads.emplace_back([&, r] {
      try {
        // Two size classes: robots 0-7 are 12x6 (framing B), 8-15 are 5x2 (JSON).
        const bool json = r >= 8;
        const int S = json ? 5 : 12, M = json ? 2 : 6;
        RobotClient c(srv.port(), 30.0);
        ToyEngine mirror;
        auto slot = mirror.create("x", S, M);
        if (json) {
          c.send_text("{\"type\":\"handshake\",\"robot_id\":\"j" + std::to_string(r) +
                      "\",\"sensory_dim\":5,\"motor_dim\":2}\n");
          if (!c.read_line()) throw std::runtime_error("no handshake reply");
        } else if (!c.handshake(Framing::B, {1, 12, 6, 1, 3})) {
          throw std::runtime_error("no handshake reply");
        }
        for (int cycle = 1; cycle <= kCycles; ++cycle) {
          std::vector<float> s(S);
          for (int i = 0; i < S; ++i) s[i] = 0.01f * ((r * 31 + cycle * 7 + i) % 100);
          const auto expected = mirror.step_group({slot}, s, {0.0f});
          std::vector<float> got;
          if (json) {
            nlohmann::json req = {{"type", "sensors"}, {"values", s}};
            c.send_text(req.dump() + "\n");
            auto line = c.read_line();
            if (!line) throw std::runtime_error("no reply at cycle " + std::to_string(cycle));
            auto j = nlohmann::json::parse(*line);
            if (j.value("cycle", -1) != cycle) throw std::runtime_error("out of order: " + *line);
            got = j["values"].get<std::vector<float>>();
          } else {
            auto f = c.exchange(Framing::B, s);
            if (!f || f->type != 1)
              throw std::runtime_error("no reply at cycle " + std::to_string(cycle));
            got = f->values;
          }
          for (int k = 0; k < M; ++k) {
            if (std::abs(got[k] - expected[k]) > 1e-5f) {
              throw std::runtime_error("robot " + std::to_string(r) + " cycle " +
                                       std::to_string(cycle) + ": motors of another history");
            }
          }
        }
      } catch (const std::exception& e) {
        failures[r] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < kRobots; ++r) {
    INFO("robot " << r);
    CHECK(failures[r] == "");
  }
  const uint64_t frames = srv.server->worker().frames_stepped();
  const uint64_t calls = srv.server->worker().brain_calls();
  INFO("brain calls " << calls << " for " << frames << " robot-cycles");
  CHECK(frames == uint64_t{kRobots} * kCycles);
  CHECK(calls < frames);
  CHECK(calls == srv.engine.calls.load());
}
