#include "test/server/toy_engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <future>
#include <limits>
#include <stdexcept>
#include <thread>

namespace fieldbrain::server::testing {

BrainEngine::Slot ToyEngine::create(const std::string&, int sensory_dim, int motor_dim) {
  Robot r;
  r.s = sensory_dim;
  r.m = motor_dim;
  r.trace.assign(sensory_dim, 0.0f);
  robots_[next_] = r;
  return next_++;
}

void ToyEngine::destroy(Slot slot) { robots_.erase(slot); }

std::vector<float> ToyEngine::motors_for(const std::vector<float>& trace, int motor_dim) {
  std::vector<float> m(motor_dim);
  for (int j = 0; j < motor_dim; ++j) {
    float acc = 0.1f * static_cast<float>(j + 1);
    for (size_t i = 0; i < trace.size(); ++i) acc += trace[i] * (((i + j) % 3) - 1.0f);
    m[j] = std::tanh(acc);
  }
  return m;
}

void ToyEngine::step_group_into(const std::vector<Slot>& slots, const std::vector<float>& sensors,
                                const std::vector<float>& rewards, std::vector<float>& out) {
  calls.fetch_add(1);
  if (delay_ms.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms.load()));
  out.clear();
  size_t at = 0;
  for (size_t k = 0; k < slots.size(); ++k) {
    Robot& r = robots_.at(slots[k]);
    if (sensors[at] == static_cast<float>(fail_on_sensor.load())) {
      throw std::runtime_error("toy brain asked to fail");
    }
    if (sensors[at] == static_cast<float>(poison_on_sensor.load())) {
      r.trace.assign(r.trace.size(), std::numeric_limits<float>::quiet_NaN());
    }
    for (int i = 0; i < r.s; ++i) r.trace[i] = 0.9f * r.trace[i] + 0.1f * sensors[at + i];
    at += r.s;
    r.trace[0] += 0.01f * rewards[k];
    ++r.cycle;
    auto m = motors_for(r.trace, r.m);
    out.insert(out.end(), m.begin(), m.end());
  }
}

int64_t ToyEngine::cycle(Slot slot) const { return robots_.at(slot).cycle; }

void ToyEngine::write_state(const Robot& r, const std::string& path) const {
  if (save_delay_ms.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(save_delay_ms.load()));
  }
  if (fail_saves.load()) throw std::runtime_error("toy disk is full");
  nlohmann::json j = {{"s", r.s}, {"m", r.m}, {"cycle", r.cycle}, {"trace", r.trace}};
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump();
    if (!out.flush()) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp);
}

ToyEngine::Robot ToyEngine::read_state(const std::string& path, int s, int m) {
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("s", -1) != s || j.value("m", -1) != m) {
    throw std::runtime_error("toy state file is corrupt or for other sizes");
  }
  Robot r;
  r.s = s;
  r.m = m;
  r.cycle = j.at("cycle").get<int64_t>();
  r.trace = j.at("trace").get<std::vector<float>>();
  return r;
}

void ToyEngine::save(Slot slot, const std::string& path) { write_state(robots_.at(slot), path); }

void ToyEngine::load(Slot slot, const std::string& path) {
  Robot& r = robots_.at(slot);
  r = read_state(path, r.s, r.m);
}

std::unique_ptr<BrainEngine::Detached> ToyEngine::load_detached(const std::string&,
                                                                 int sensory_dim, int motor_dim,
                                                                 const std::string& path) {
  if (load_delay_ms.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(load_delay_ms.load()));
  }
  auto d = std::make_unique<DetachedRobot>();
  d->robot = read_state(path, sensory_dim, motor_dim);
  return d;
}

BrainEngine::Slot ToyEngine::adopt(std::unique_ptr<Detached> brain) {
  robots_[next_] = dynamic_cast<DetachedRobot&>(*brain).robot;
  return next_++;
}

BrainEngine::StateWriterFn ToyEngine::snapshot(Slot slot) {
  Robot copy = robots_.at(slot);
  return [this, copy](const std::string& path) { write_state(copy, path); };
}

nlohmann::json ToyEngine::telemetry(Slot slot) {
  if (telemetry_delay_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(telemetry_delay_ms.load()));
  }
  const Robot& r = robots_.at(slot);
  return {{"cycle", r.cycle},
          {"field_energy", r.trace.empty() ? 0.0f : r.trace[0]},
          {"prediction_confidence", 0.5}};
}

nlohmann::json ToyEngine::field_slice(Slot slot, int64_t channel, int64_t z) {
  if (channel < 0 || channel >= 64 || z < 0 || z >= 4) throw std::invalid_argument("out of range");
  robots_.at(slot);
  return {{"resolution", 4},
          {"channel", channel},
          {"z", z},
          {"values", std::vector<std::vector<float>>(4, std::vector<float>(4, 0.0f))}};
}

nlohmann::json ToyEngine::describe() const {
  return {{"resolution", 4}, {"field_shape", {4, 4, 4, 64}}, {"device", "cpu"}};
}

ServerConfig test_config() {
  ServerConfig c;
  c.host = "127.0.0.1";
  c.port = 0;
  c.monitor_port = 0;
  c.state_dir = "";
  c.save_every_cycles = 0;
  c.log_level = "off";
  c.max_bad_frames = 5;
  // A test's monitor client may sit silent while a robot cycles: no 2025-08-20 push unless a
  // test asks for it.
  c.legacy_push = false;
  c.robots.require_tokens = false;  // the identity tests turn protection on
  return c;
}

ToyServer::ToyServer(ServerConfig config) {
  spdlog::set_level(spdlog::level::from_str(config.log_level));
  server = std::make_unique<Server>(std::move(config), engine);
  server->start();
}

ToyServer::~ToyServer() { server->stop(); }

nlohmann::json on_worker(Server& server, std::function<nlohmann::json(BrainWorker&)> fn) {
  auto promise = std::make_shared<std::promise<nlohmann::json>>();
  auto future = promise->get_future();
  const bool queued =
      server.worker().query([promise, fn](BrainWorker& w) { promise->set_value(fn(w)); });
  if (!queued) throw std::runtime_error("worker stopped");
  if (future.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    throw std::runtime_error("worker did not answer within 10 s");
  }
  return future.get();
}

std::vector<std::string> robot_keys(Server& server) {
  auto j = on_worker(server, [](BrainWorker& w) {
    nlohmann::json keys = nlohmann::json::array();
    for (const auto& r : w.robots()) keys.push_back(r.key);
    return keys;
  });
  auto keys = j.get<std::vector<std::string>>();
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace fieldbrain::server::testing
