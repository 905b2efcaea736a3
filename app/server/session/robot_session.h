// One robot connection on the robot port: a single lock-step state machine
//   detecting -> running (handshake, then sensors -> brain -> motors, one at a time) -> closed
// over a RobotCodec that owns every format question (robot_codec.h): the session never asks
// which framing it speaks. Owned by shared_from_this; every method runs on the I/O thread.
// While a message is in the brain the session decodes and reads nothing more, so replies can
// never overtake each other, and it stops reading while its unsent replies exceed
// max_write_queue_bytes, so a client that never reads holds a bounded amount of memory.
#pragma once

#include <boost/asio.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/server/worker/brain_worker.h"
#include "app/server/stats/connection_log.h"
#include "app/server/session/reply_queue.h"
#include "app/server/protocol/robot_codec.h"
#include "app/server/config/server_config.h"
#include "app/server/stats/server_stats.h"

namespace fieldbrain::server {

class RobotSession;

// What a session needs from its server.
struct SessionContext {
  const ServerConfig& config;
  BrainWorker& worker;
  ServerStats& stats;
  bool gpu = false;
  float server_caps = 8.0f;  // handshake reply's capability mask: bit3 = many robots
  std::function<void(RobotSession*)> on_closed;
  // The brain's bounds on a sensor value and a reward (BrainEngine::input_limits): a frame
  // beyond them is refused like one with NaN.
  BrainEngine::InputLimits input_limits;
};

class RobotSession : public std::enable_shared_from_this<RobotSession> {
 public:
  RobotSession(boost::asio::ip::tcp::socket socket, SessionContext& ctx);

  void start();
  // Server shutdown: answer the message in flight (if any), then close.
  void drain();
  // Closes now, dropping unsent replies (the shutdown deadline).
  void close(const std::string& why);
  const std::string& peer() const { return peer_; }
  const std::string& peer_address() const { return peer_address_; }

 private:
  // The state machine: decode what is buffered, one message at a time, read when more is needed.
  void pump();
  void read_some();
  void on_opening();
  void handle(WireMessage msg);
  void on_handshake(WireHandshake hs);
  void on_sensors(WireSensors s);
  void on_rejected(const WireRejected& r);
  void refuse_handshake(int code, const std::string& why);
  void count_bad(const char* what);

  // The handshake goes to the worker whole (BrainClaim::handshake) and comes back with its
  // answer, so the reply is built from the very value the robot sent.
  void start_attach(WireHandshake hs);
  void on_attached(const WireHandshake& hs, const AttachResult& r);
  void start_step(std::vector<float> sensors, float reward);
  void on_step_done(StepResult r);

  // Logs (rate-limited per connection) and counts one error.
  void report(int code, const std::string& message);
  void send(std::string bytes);
  void do_write();
  // Closes once the replies are out. `linger`: half-close and discard what the client still
  // sends (bounded), so a reply to a refused stream is not destroyed by a reset.
  void close_after_writes(const std::string& why, bool linger = false);
  void linger();
  void touch();
  void arm_timer();
  const std::string& who() const;

  boost::asio::ip::tcp::socket socket_;
  boost::asio::any_io_executor executor_;
  boost::asio::steady_timer timer_;
  SessionContext& ctx_;
  std::string peer_, peer_address_;
  ConnectionLog log_;  // this connection's and the server-wide log budgets

  std::unique_ptr<RobotCodec> codec_;  // null while the opening bytes are undecided
  std::vector<uint8_t> opening_;       // the first bytes, until the codec exists

  // The robot after a successful handshake.
  bool attached_ = false;
  RobotId robot_id_ = 0;
  std::string robot_key_, who_;
  int sensory_dim_ = 0, motor_dim_ = 0;
  std::string handshake_reply_;
  int consecutive_bad_ = 0;

  bool busy_ = false;     // a message is in the brain (a step or an attach)
  bool reading_ = false;  // an async read is outstanding
  bool draining_ = false;
  bool closing_ = false;  // close once the write queue is empty
  bool closed_ = false;
  bool linger_after_writes_ = false;
  bool lingering_ = false;
  bool paused_logged_ = false;  // the write-queue pause was logged
  size_t discarded_ = 0;
  std::string close_reason_;
  bool writing_ = false;
  ReplyQueue out_;
  std::chrono::steady_clock::time_point connected_at_, last_activity_;
};

}  // namespace fieldbrain::server
