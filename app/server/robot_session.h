// One robot connection on the robot port: framing detection, exact reads of header then body
// (or one JSON line), the handshake, and the lock-step sensory/motor exchange of
// PROTOCOL.md. Owned by shared_from_this; every method runs on the I/O thread. While a frame
// is in the brain the session reads nothing more, so replies can never overtake each other.
#pragma once

#include <boost/asio.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/server/brain_worker.h"
#include "app/server/framing.h"
#include "app/server/handshake.h"
#include "app/server/json_lines.h"
#include "app/server/server_config.h"
#include "app/server/server_stats.h"

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
};

class RobotSession : public std::enable_shared_from_this<RobotSession> {
 public:
  RobotSession(boost::asio::ip::tcp::socket socket, SessionContext& ctx);

  void start();
  // Server shutdown: answer the frame in flight (if any), then close.
  void drain();
  // Closes now, dropping unsent replies (the shutdown deadline).
  void close(const std::string& why);
  const std::string& peer() const { return peer_; }

 private:
  void read_first_byte();
  void read_rest_of_detect();
  void read_header(size_t have);
  void on_header();
  void on_frame(uint8_t type, std::vector<float> values);
  void handle_handshake(const std::vector<float>& values);
  void handle_sensory(std::vector<float> values);
  void read_line();
  void on_line(std::string line);
  void on_json_handshake(const JsonHandshake& hs);

  void start_attach(BrainClaim request, std::function<void(const AttachResult&)> then);
  void start_step(std::vector<float> sensors, float reward);
  void on_step_done(StepResult r);
  void reply_bad_sensory(int code, const std::string& why);

  void send(std::string bytes);
  void send_frame(MessageType type, const std::vector<float>& values);
  void do_write();
  void continue_reading();
  void close_after_writes(const std::string& why);
  void touch();
  void arm_timer();
  const std::string& who() const;

  boost::asio::ip::tcp::socket socket_;
  boost::asio::any_io_executor executor_;
  boost::asio::steady_timer timer_;
  SessionContext& ctx_;
  std::string peer_;

  Framing framing_ = Framing::A;
  bool framing_known_ = false;
  std::vector<uint8_t> header_;
  std::vector<uint8_t> body_;
  FrameHeader frame_;
  boost::asio::streambuf line_buf_;
  std::string line_prefix_;

  // Robot state after a successful handshake.
  bool attached_ = false;
  RobotId robot_id_ = 0;
  std::string robot_key_;
  Capabilities caps_;
  std::string handshake_reply_;
  int consecutive_bad_ = 0;

  bool busy_ = false;  // a frame is in the brain (or a handshake is being attached)
  bool draining_ = false;
  bool closing_ = false;  // close once the write queue is empty
  bool closed_ = false;
  bool writing_ = false;
  std::deque<std::string> out_;
  std::chrono::steady_clock::time_point connected_at_, last_activity_;
};

}  // namespace fieldbrain::server
