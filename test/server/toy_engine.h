// A small deterministic BrainEngine for the socket tests: each robot keeps a leaky trace of
// its inputs, and its motors are tanh of that trace (so replies depend on history, and a
// resumed robot continues exactly). Counts calls; can be slowed down to model a slow brain.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "app/server/worker/brain_engine.h"
#include "app/server/session/server.h"

namespace fieldbrain::server::testing {

class ToyEngine : public BrainEngine {
 public:
  Slot create(const std::string& robot_key, int sensory_dim, int motor_dim) override;
  void destroy(Slot slot) override;
  void step_group_into(const std::vector<Slot>& slots, const std::vector<float>& sensors,
                       const std::vector<float>& rewards, std::vector<float>& motors) override;
  int64_t cycle(Slot slot) const override;
  void save(Slot slot, const std::string& path) override;
  void load(Slot slot, const std::string& path) override;
  std::unique_ptr<Detached> load_detached(const std::string& robot_key, int sensory_dim,
                                          int motor_dim, const std::string& path) override;
  Slot adopt(std::unique_ptr<Detached> brain) override;
  StateWriterFn snapshot(Slot slot) override;
  nlohmann::json telemetry(Slot slot) override;
  nlohmann::json field_slice(Slot slot, int64_t channel, int64_t z) override;
  nlohmann::json describe() const override;
  bool on_gpu() const override { return false; }
  std::string state_extension() const override { return ".toy"; }

  std::atomic<int> delay_ms{0};           // sleep per step_group call
  std::atomic<int> telemetry_delay_ms{0};  // sleep per telemetry() (a costly monitor query)
  std::atomic<int> fail_on_sensor{-999};  // throw when sensor[0] equals this
  // When sensor[0] equals this, the robot's trace becomes NaN (a brain whose state stopped
  // being finite, issue 36): its motors come back NaN as a real engine's do (brain_engine.h).
  std::atomic<int> poison_on_sensor{-999};
  std::atomic<uint64_t> calls{0};
  std::atomic<int> save_delay_ms{0};  // a slow disk: sleep per save written
  std::atomic<int> load_delay_ms{0};  // a big save: sleep per load
  std::atomic<bool> fail_saves{false};

  // The motors the toy computes for a trace, for tests that predict a reply.
  static std::vector<float> motors_for(const std::vector<float>& trace, int motor_dim);

 private:
  struct Robot {
    int s = 0, m = 0;
    int64_t cycle = 0;
    std::vector<float> trace;
  };
  struct DetachedRobot : Detached {
    Robot robot;
  };
  void write_state(const Robot& r, const std::string& path) const;
  static Robot read_state(const std::string& path, int s, int m);
  std::map<Slot, Robot> robots_;
  Slot next_ = 1;
};

// A test config: ephemeral ports, no persistence, loopback, quiet logs.
ServerConfig test_config();

// An in-process server on ephemeral ports around a ToyEngine.
struct ToyServer {
  explicit ToyServer(ServerConfig config = test_config());
  ~ToyServer();
  ToyEngine engine;
  std::unique_ptr<Server> server;
  uint16_t port() const { return server->port(); }
  uint16_t monitor_port() const { return server->monitor_port(); }
};

// Runs `fn` on the server's brain worker and waits (bounded) for its result.
nlohmann::json on_worker(Server& server, std::function<nlohmann::json(BrainWorker&)> fn);

// Keys of the robots attached right now.
std::vector<std::string> robot_keys(Server& server);

}  // namespace fieldbrain::server::testing
