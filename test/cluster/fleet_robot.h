// A simulated robot for the fleet tests: cycles through HAProxy from its own loopback source
// address (so HAProxy's source hashing spreads robots over servers), reconnects whenever its
// connection ends, and records every gap between replies and the brain cycle it resumed at.
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "app/server/protocol/robot_client.h"

namespace fieldbrain::server::cluster::testing {

using Clock = std::chrono::steady_clock;

struct ReplyGap {
  Clock::time_point last_before;  // the last reply on the old connection
  Clock::time_point first_after;  // the first reply on the new one
  int64_t cycle_before = 0;       // JSON: brain cycle of that last reply
  int64_t resumed_at = 0;         // JSON: brain cycle the handshake reported
  double seconds() const { return std::chrono::duration<double>(first_after - last_before).count(); }
};

class FleetRobot {
 public:
  // JSON robots name themselves; binary robots (framing B) are told apart by their sizes
  // (the profile key "picarx_<S>s_<M>m").
  // `pace`: pause after each reply (a 50 Hz robot by default; 0 = as fast as the server).
  FleetRobot(uint16_t port, std::string source, std::string id, bool json, int s, int m,
             std::chrono::milliseconds pace = std::chrono::milliseconds(20))
      : port_(port),
        source_(std::move(source)),
        id_(std::move(id)),
        json_(json),
        s_(s),
        m_(m),
        pace_(pace) {
    thread_ = std::thread([this] { run(); });
  }
  ~FleetRobot() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  const std::string& id() const { return id_; }
  bool json() const { return json_; }
  std::string identity() const {
    return json_ ? "json:" + id_
                 : "bin:picarx_" + std::to_string(s_) + "s_" + std::to_string(m_) + "m";
  }
  int64_t replies() const { return replies_.load(); }
  int64_t cycle() const { return cycle_.load(); }
  int connections() const { return connections_.load(); }
  std::vector<ReplyGap> gaps() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return gaps_;
  }
  std::vector<std::string> problems() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return problems_;
  }
  std::vector<std::string> refusals() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return refusals_;
  }
  // Why each connection ended (for failure messages).
  std::string endings() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::string out;
    for (const auto& e : endings_) out += e + "; ";
    return out;
  }
  // Waits until the robot has `n` more replies than now.
  bool advance(int64_t n, double limit_s) const {
    const int64_t target = replies() + n;
    const auto end = Clock::now() + std::chrono::duration<double>(limit_s);
    while (Clock::now() < end) {
      if (replies() >= target) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

 private:
  void note(std::vector<std::string>& list, std::string what) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (list.size() < 50) list.push_back(std::move(what));
  }

  void run() {
    bool replied_before = false;
    Clock::time_point last_reply{};
    int64_t cycle_before = 0;
    while (!stop_) {
      try {
        // Long enough for a fleet handover (the lease TTL and a save); a dead server's connection
        // is closed by HAProxy at once, so this bounds only a silent one.
        RobotClient c(port_, 15.0, 0, source_);
        int64_t resumed_at = 0;
        if (json_) {
          nlohmann::json hs = {{"type", "handshake"},
                               {"robot_id", id_},
                               {"sensory_dim", s_},
                               {"motor_dim", m_}};
          if (!token_.empty()) hs["token"] = token_;
          c.send_text(hs.dump() + "\n");
          auto line = c.read_line();
          if (!line) throw std::runtime_error("no JSON handshake reply");
          const auto reply = nlohmann::json::parse(*line);
          if (reply.value("type", "") != "handshake" || !reply.value("accepted", false)) {
            note(refusals_, *line);
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            continue;
          }
          if (reply.contains("token")) token_ = reply["token"].get<std::string>();
          resumed_at = reply.value("cycle", int64_t{0});
        } else {
          auto reply = c.handshake(Framing::B, {1, float(s_), float(m_), 1, 0});
          if (!reply) throw std::runtime_error("no binary handshake reply");
          if (reply->type != uint8_t(MessageType::Handshake)) {
            note(refusals_, "binary handshake answered with type " + std::to_string(reply->type));
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            continue;
          }
        }
        ++connections_;
        bool first = true;
        for (int64_t k = 0; !stop_; ++k) {
          std::vector<float> sensors(static_cast<size_t>(s_));
          for (int i = 0; i < s_; ++i) sensors[size_t(i)] = std::sin(0.07f * float(k) * (i + 1));
          int64_t cycle = 0;
          if (json_) {
            c.send_text(nlohmann::json({{"type", "sensors"}, {"values", sensors}}).dump() + "\n");
            auto line = c.read_line();
            if (!line) {
              note(endings_, "closed after " + std::to_string(k) + " replies");
              break;
            }
            const auto reply = nlohmann::json::parse(*line);
            if (reply.value("type", "") != "motors") {
              note(problems_, "unexpected reply: " + *line);
              break;
            }
            cycle = reply.value("cycle", int64_t{0});
          } else {
            auto reply = c.exchange(Framing::B, sensors);
            if (!reply) {
              note(endings_, "closed after " + std::to_string(k) + " replies");
              break;
            }
            if (reply->type != uint8_t(MessageType::ActionOutput) ||
                reply->values.size() != size_t(m_)) {
              note(problems_, "unexpected binary reply of type " + std::to_string(reply->type));
              break;
            }
          }
          const auto now = Clock::now();
          if (first && replied_before) {
            std::lock_guard<std::mutex> lock(mutex_);
            gaps_.push_back({last_reply, now, cycle_before, resumed_at});
          }
          first = false;
          replied_before = true;
          last_reply = now;
          cycle_before = cycle;
          cycle_.store(cycle);
          ++replies_;
          if (pace_.count() > 0) std::this_thread::sleep_for(pace_);
        }
      } catch (const std::exception& e) {
        note(endings_, e.what());
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  }

  uint16_t port_;
  std::string source_;
  std::string id_;
  bool json_;
  int s_, m_;
  std::chrono::milliseconds pace_;
  std::string token_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> replies_{0};
  std::atomic<int64_t> cycle_{0};
  std::atomic<int> connections_{0};
  mutable std::mutex mutex_;
  std::vector<ReplyGap> gaps_;
  std::vector<std::string> problems_;
  std::vector<std::string> refusals_;
  std::vector<std::string> endings_;
  std::thread thread_;
};

// Waits until every robot of `robots` (FleetRobot pointers or unique_ptrs) has `n` more replies
// than when called, all counted from that same moment: the robots cycle side by side, so
// waiting for one robot's n replies after another's only added up their waits (12 robots x 30
// replies at 50 Hz: 7 s instead of 0.6 s). Returns "" or, for each robot still short after
// `limit_s`, a line with its id, how many replies it lacks, its refusals and why its
// connections ended.
template <typename Robots>
std::string advance_all(const Robots& robots, int64_t n, double limit_s) {
  std::vector<std::pair<const FleetRobot*, int64_t>> targets;
  for (const auto& r : robots) targets.emplace_back(&*r, r->replies() + n);
  const auto end = Clock::now() + std::chrono::duration<double>(limit_s);
  for (const auto& [robot, target] : targets) {
    while (robot->replies() < target && Clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  std::string short_of;
  for (const auto& [robot, target] : targets) {
    if (robot->replies() >= target) continue;
    const auto refusals = robot->refusals();
    short_of += robot->id() + ": " + std::to_string(target - robot->replies()) +
                " replies short; refusals: " + (refusals.empty() ? "none" : refusals.front()) +
                "; connections ended: " + robot->endings() + "\n";
  }
  return short_of;
}

}  // namespace fieldbrain::server::cluster::testing
