#include "app/server/robot_session.h"

#include <spdlog/spdlog.h>

#include <cmath>

namespace fieldbrain::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

RobotSession::RobotSession(tcp::socket socket, SessionContext& ctx)
    : socket_(std::move(socket)),
      executor_(socket_.get_executor()),
      timer_(executor_),
      ctx_(ctx),
      header_(13),
      line_buf_(ctx.config.max_json_line) {
  boost::system::error_code ec;
  auto ep = socket_.remote_endpoint(ec);
  peer_ = ec ? std::string("?") : ep.address().to_string() + ":" + std::to_string(ep.port());
  socket_.set_option(tcp::no_delay(true), ec);
  socket_.set_option(asio::socket_base::keep_alive(true), ec);
}

const std::string& RobotSession::who() const { return attached_ ? robot_key_ : peer_; }

void RobotSession::start() {
  connected_at_ = last_activity_ = std::chrono::steady_clock::now();
  ctx_.stats.connection_opened();
  spdlog::info("new connection from {}", peer_);
  arm_timer();
  read_first_byte();
}

void RobotSession::drain() {
  draining_ = true;
  if (!busy_) close_after_writes("server shutting down");
}

void RobotSession::touch() { last_activity_ = std::chrono::steady_clock::now(); }

// One timer serves both deadlines: the handshake must come within handshake_timeout_s of the
// connect, and afterwards some byte within idle_timeout_s. A frame in the brain never times
// out on the robot's account.
void RobotSession::arm_timer() {
  if (closed_) return;
  using namespace std::chrono;
  const auto now = steady_clock::now();
  const auto limit = duration_cast<steady_clock::duration>(
      duration<double>(attached_ ? ctx_.config.idle_timeout_s : ctx_.config.handshake_timeout_s));
  const auto since = attached_ ? last_activity_ : connected_at_;
  auto deadline = since + limit;
  if (!busy_ && now >= deadline) {
    ctx_.stats.error(
        attached_ ? kCodeConnectionTimeout : kCodeHandshakeTimeout, who(),
        attached_ ? "idle timeout: no data, closing" : "no handshake in time, closing");
    close(attached_ ? "idle timeout" : "handshake timeout");
    return;
  }
  if (busy_ || deadline < now) deadline = now + limit;
  timer_.expires_at(deadline);
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec == asio::error::operation_aborted || self->closed_) return;
    self->arm_timer();
  });
}

// --- binary framing ------------------------------------------------------------------------

void RobotSession::read_first_byte() {
  asio::async_read(socket_, asio::buffer(header_.data(), 1),
                   [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                     if (ec) return self->close(ec.message());
                     self->touch();
                     if (auto f = detect_framing(self->header_.data(), 1)) {
                       self->framing_ = *f;  // JSON lines
                       self->framing_known_ = true;
                       self->line_prefix_ = "{";
                       spdlog::info("{}: framing {}", self->peer_, framing_name(*f));
                       return self->read_line();
                     }
                     self->read_rest_of_detect();
                   });
}

void RobotSession::read_rest_of_detect() {
  asio::async_read(socket_, asio::buffer(header_.data() + 1, 3),
                   [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                     if (ec) return self->close(ec.message());
                     self->touch();
                     self->framing_ = *detect_framing(self->header_.data(), 4);
                     self->framing_known_ = true;
                     spdlog::info("{}: framing {}", self->peer_, framing_name(self->framing_));
                     self->read_header(4);
                   });
}

void RobotSession::read_header(size_t have) {
  const size_t need = header_size(framing_);
  asio::async_read(socket_, asio::buffer(header_.data() + have, need - have),
                   [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                     if (ec) return self->close(ec.message());
                     self->touch();
                     self->on_header();
                   });
}

void RobotSession::on_header() {
  const HeaderProblem problem =
      parse_header(framing_, header_.data(), ctx_.config.max_frame_floats, &frame_);
  switch (problem) {
    case HeaderProblem::None:
      break;
    case HeaderProblem::BadMagic:
      // The stream is out of sync; the HEAD client reconnects after a close.
      ctx_.stats.error(kCodeInvalidMessage, who(), "bad magic in frame header, closing");
      return close("bad magic");
    case HeaderProblem::TooLarge:
      ctx_.stats.error(kCodeMessageTooLarge, who(),
                       "frame of " + std::to_string(frame_.count) + " floats (length " +
                           std::to_string(frame_.length) + ") exceeds the limit of " +
                           std::to_string(ctx_.config.max_frame_floats) + ", closing");
      send_frame(MessageType::Error, {kErrorTooLarge});
      return close_after_writes("frame too large");
    case HeaderProblem::LengthMismatch:
      ctx_.stats.error(kCodeInvalidMessage, who(),
                       "length " + std::to_string(frame_.length) + " does not match count " +
                           std::to_string(frame_.count) + ", closing");
      send_frame(MessageType::Error, {kErrorProtocol});
      return close_after_writes("length/count mismatch");
  }
  body_.resize(4 * size_t{frame_.count});
  if (body_.empty()) return on_frame(frame_.type, {});
  asio::async_read(socket_, asio::buffer(body_),
                   [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                     if (ec) return self->close("truncated frame: " + ec.message());
                     self->touch();
                     self->on_frame(self->frame_.type,
                                    decode_floats(self->body_.data(), self->frame_.count));
                   });
}

void RobotSession::on_frame(uint8_t type, std::vector<float> values) {
  switch (type) {
    case static_cast<uint8_t>(MessageType::Handshake):
      return handle_handshake(values);
    case static_cast<uint8_t>(MessageType::SensoryInput):
      return handle_sensory(std::move(values));
    default:
      // ef2bdb8: ERROR [1.0], payload consumed, connection kept.
      ctx_.stats.error(kCodeUnknownType, who(),
                       "unknown message type " + std::to_string(type) + ", answered ERROR 1.0");
      send_frame(MessageType::Error, {kErrorUnknownType});
      return continue_reading();
  }
}

void RobotSession::handle_handshake(const std::vector<float>& values) {
  if (attached_) {
    // ef2bdb8: the existing session's reply again (idempotent), logged as 2004.
    ctx_.stats.error(kCodeDuplicateSession, who(), "duplicate handshake, answered as before");
    send(handshake_reply_);
    return continue_reading();
  }
  HandshakeLimits limits;
  limits.max_dim =
      std::min<int>(ctx_.config.max_dim, static_cast<int>(ctx_.config.max_frame_floats) - 1);
  HandshakeParse parsed = parse_capabilities(values, limits);
  auto refuse = [this](const std::string& why, int code = kCodeInvalidCapabilities) {
    ctx_.stats.error(code, who(), "handshake refused: " + why);
    send_frame(MessageType::Handshake, handshake_error_reply(code));
    // HEAD clients treat any reply as a handshake; closing makes them retry cleanly.
    if (framing_ == Framing::B) return close_after_writes("handshake refused");
    continue_reading();
  };
  if (auto* why = std::get_if<std::string>(&parsed)) return refuse(*why);
  const Capabilities caps = std::get<Capabilities>(parsed);
  BrainClaim request;
  request.key = profile_key(caps);
  request.sensory_dim = caps.sensory_dim;
  request.motor_dim = caps.motor_dim;
  start_attach(std::move(request),
               [this, caps, refuse](const AttachResult& r) {
                 if (!r.ok) return refuse(r.error, r.code ? r.code : kCodeInvalidCapabilities);
                 caps_ = caps;
                 handshake_reply_ = [&] {
                   auto bytes =
                       encode_frame(framing_, MessageType::Handshake,
                                    handshake_reply(framing_, caps, ctx_.gpu, ctx_.server_caps));
                   return std::string(bytes.begin(), bytes.end());
                 }();
                 send(handshake_reply_);
                 continue_reading();
               });
}

void RobotSession::handle_sensory(std::vector<float> values) {
  ctx_.stats.sensory_frame();
  if (!attached_) {
    // ef2bdb8: an empty ACTION_OUTPUT, connection kept (3001); repeated, it closes.
    ctx_.stats.error(kCodeSessionNotFound, who(), "sensory frame before a handshake");
    send_frame(MessageType::ActionOutput, {});
    if (++consecutive_bad_ >= ctx_.config.max_bad_frames) {
      return close_after_writes("too many frames without a handshake");
    }
    return continue_reading();
  }
  const size_t s = caps_.sensory_dim;
  if (values.size() != s && values.size() != s + 1) {
    return reply_bad_sensory(kCodeInvalidMessage,
                             "sensory frame of " + std::to_string(values.size()) +
                                 " values, expected " + std::to_string(s) + " (or " +
                                 std::to_string(s + 1) + " with a reward)");
  }
  for (float v : values) {
    if (!std::isfinite(v)) {
      return reply_bad_sensory(kCodeInvalidMessage, "sensory frame with NaN or Inf");
    }
  }
  float reward = 0.0f;
  if (values.size() == s + 1) {
    reward = values.back();
    values.pop_back();
  }
  start_step(std::move(values), reward);
}

// A bad frame never reaches the brain: the robot gets a safe stop (M zeros; HEAD clients read
// any frame as motors), the error is logged and counted, and a run of them closes.
void RobotSession::reply_bad_sensory(int code, const std::string& why) {
  ctx_.stats.error(code, who(), why + "; answered with zero motors");
  if (framing_ == Framing::JsonLines) {
    send(json_error_reply(code, why));
  } else {
    send_frame(MessageType::ActionOutput, std::vector<float>(caps_.motor_dim, 0.0f));
  }
  if (++consecutive_bad_ >= ctx_.config.max_bad_frames) {
    ctx_.stats.error(code, who(),
                     std::to_string(consecutive_bad_) + " bad frames in a row, closing");
    return close_after_writes("too many bad frames");
  }
  continue_reading();
}

// --- JSON lines ----------------------------------------------------------------------------

void RobotSession::read_line() {
  asio::async_read_until(
      socket_, line_buf_, '\n',
      [self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
        if (ec == asio::error::not_found) {
          self->ctx_.stats.error(kCodeMessageTooLarge, self->who(),
                                 "JSON line longer than " +
                                     std::to_string(self->ctx_.config.max_json_line) +
                                     " bytes, closing");
          self->send(json_error_reply(kCodeMessageTooLarge, "line too long"));
          return self->close_after_writes("line too long");
        }
        if (ec) return self->close(ec.message());
        self->touch();
        std::string line(asio::buffers_begin(self->line_buf_.data()),
                         asio::buffers_begin(self->line_buf_.data()) + n);
        self->line_buf_.consume(n);
        line.pop_back();  // '\n'
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!self->line_prefix_.empty()) {
          line = self->line_prefix_ + line;
          self->line_prefix_.clear();
        }
        self->on_line(std::move(line));
      });
}

void RobotSession::on_line(std::string line) {
  if (line.find_first_not_of(" \t") == std::string::npos) return continue_reading();
  const int default_s = ctx_.config.brain.value("sensory_dim", 16);
  const int default_m = ctx_.config.brain.value("motor_dim", 4);
  JsonMessage msg = parse_json_line(line, ctx_.config.max_dim, default_s, default_m);
  if (auto* bad = std::get_if<JsonBad>(&msg)) {
    ctx_.stats.error(bad->code, who(), bad->message);
    send(json_error_reply(bad->code, bad->message));
    return continue_reading();
  }
  if (auto* hs = std::get_if<JsonHandshake>(&msg)) return on_json_handshake(*hs);
  auto& sensors = std::get<JsonSensors>(msg);
  ctx_.stats.sensory_frame();
  if (!attached_) {
    ctx_.stats.error(kCodeSessionNotFound, who(), "sensors before a handshake");
    send(json_error_reply(kCodeSessionNotFound, "send a handshake first"));
    if (++consecutive_bad_ >= ctx_.config.max_bad_frames) {
      return close_after_writes("too many frames without a handshake");
    }
    return continue_reading();
  }
  if (!sensors.values_ok) return reply_bad_sensory(kCodeInvalidMessage, "'values' must be numbers");
  if (sensors.values.size() != static_cast<size_t>(caps_.sensory_dim)) {
    return reply_bad_sensory(kCodeInvalidMessage,
                             "'values' has " + std::to_string(sensors.values.size()) +
                                 " elements, expected " + std::to_string(caps_.sensory_dim));
  }
  bool finite = std::isfinite(sensors.reward);
  for (float v : sensors.values) finite = finite && std::isfinite(v);
  if (!finite) return reply_bad_sensory(kCodeInvalidMessage, "non-finite sensor or reward");
  start_step(std::move(sensors.values), sensors.reward);
}

void RobotSession::on_json_handshake(const JsonHandshake& hs) {
  if (attached_) {
    ctx_.stats.error(kCodeDuplicateSession, who(), "duplicate handshake, answered as before");
    send(handshake_reply_);
    return continue_reading();
  }
  if (hs.sensory_dim + 1 > static_cast<int>(ctx_.config.max_frame_floats)) {
    ctx_.stats.error(kCodeInvalidCapabilities, who(), "sensory_dim above max_frame_floats");
    send(json_error_reply(kCodeInvalidCapabilities, "sensory_dim above max_frame_floats"));
    return continue_reading();
  }
  const std::string key = hs.robot_id.empty() ? "json_" + std::to_string(hs.sensory_dim) + "s_" +
                                                    std::to_string(hs.motor_dim) + "m"
                                              : hs.robot_id;
  Capabilities caps;
  caps.sensory_dim = hs.sensory_dim;
  caps.motor_dim = hs.motor_dim;
  BrainClaim request;
  request.json = true;
  request.key = key;
  request.sensory_dim = hs.sensory_dim;
  request.motor_dim = hs.motor_dim;
  request.token = hs.token;
  start_attach(std::move(request), [this, caps](const AttachResult& r) {
    if (!r.ok) {
      const int code = r.code ? r.code : kCodeInvalidCapabilities;
      ctx_.stats.error(code, who(), "handshake refused: " + r.error);
      send(json_error_reply(code, r.error));
      return continue_reading();
    }
    caps_ = caps;
    handshake_reply_ =
        json_handshake_reply(r.key, caps.sensory_dim, caps.motor_dim, r.cycle, r.token);
    send(handshake_reply_);
    continue_reading();
  });
}

// --- brain round trips ---------------------------------------------------------------------

void RobotSession::start_attach(BrainClaim request,
                                std::function<void(const AttachResult&)> then) {
  busy_ = true;
  auto self = shared_from_this();
  auto work = asio::make_work_guard(executor_);
  const int sensory_dim = request.sensory_dim, motor_dim = request.motor_dim;
  request.framing = framing_name(framing_);
  boost::system::error_code ec;
  request.peer_address = socket_.remote_endpoint(ec).address().to_string();
  // A newer connection took this robot's brain (this one went silent): close.
  request.on_taken_over = [weak = std::weak_ptr<RobotSession>(self), executor = executor_] {
    asio::post(executor, [weak] {
      if (auto s = weak.lock()) s->close("brain taken over by a newer connection");
    });
  };
  const bool queued = ctx_.worker.attach(
      std::move(request), [self, work, then, sensory_dim, motor_dim](AttachResult r) {
        asio::post(self->executor_, [self, then, sensory_dim, motor_dim, r = std::move(r)] {
          self->busy_ = false;
          if (self->closed_) {
            // The robot left while its brain was being made: release it again.
            if (r.ok) self->ctx_.worker.detach(r.id);
            return;
          }
          if (r.ok) {
            self->attached_ = true;
            self->robot_id_ = r.id;
            self->robot_key_ = r.key;
            self->consecutive_bad_ = 0;
            self->ctx_.stats.handshake_done();
            // caps_ is only set by `then`: log the dimensions this attach was made with.
            spdlog::info("{}: handshake complete as '{}' ({} sensors, {} motors, cycle {}{})",
                         self->peer_, r.key, sensory_dim, motor_dim, r.cycle,
                         r.resumed ? ", resumed" : "");
          }
          then(r);
        });
      });
  if (!queued) {
    busy_ = false;
    close("server shutting down");
  }
}

void RobotSession::start_step(std::vector<float> sensors, float reward) {
  busy_ = true;
  auto self = shared_from_this();
  auto work = asio::make_work_guard(executor_);
  const bool queued =
      ctx_.worker.step(robot_id_, std::move(sensors), reward, [self, work](StepResult r) {
        asio::post(self->executor_,
                   [self, r = std::move(r)]() mutable { self->on_step_done(std::move(r)); });
      });
  if (!queued) {
    busy_ = false;
    close("server shutting down");
  }
}

void RobotSession::on_step_done(StepResult r) {
  busy_ = false;
  if (closed_) return;
  if (r.motors.size() != static_cast<size_t>(caps_.motor_dim)) {
    r.motors.assign(caps_.motor_dim, 0.0f);  // the robot was released under us
  }
  consecutive_bad_ = 0;
  if (framing_ == Framing::JsonLines) {
    send(json_motors_reply(r.motors, r.cycle));
  } else {
    send_frame(MessageType::ActionOutput, r.motors);
  }
  continue_reading();
}

// --- writing, reading on, closing ----------------------------------------------------------

void RobotSession::continue_reading() {
  if (closed_ || closing_) return;
  if (draining_) return close_after_writes("server shutting down");
  if (framing_ == Framing::JsonLines) return read_line();
  read_header(0);
}

void RobotSession::send_frame(MessageType type, const std::vector<float>& values) {
  auto bytes = encode_frame(framing_, type, values);
  send(std::string(bytes.begin(), bytes.end()));
}

void RobotSession::send(std::string bytes) {
  if (closed_) return;
  out_.push_back(std::move(bytes));
  if (!writing_) do_write();
}

void RobotSession::do_write() {
  if (out_.empty()) {
    writing_ = false;
    if (closing_) close("closed by server");
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(out_.front()),
                    [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                      if (ec) return self->close("send failed: " + ec.message());
                      self->out_.pop_front();
                      self->do_write();
                    });
}

void RobotSession::close_after_writes(const std::string& why) {
  if (closed_) return;
  closing_ = true;
  if (!writing_ && out_.empty()) close(why);
}

void RobotSession::close(const std::string& why) {
  if (closed_) return;
  closed_ = true;
  spdlog::info("{}: connection closed ({})", who(), why);
  boost::system::error_code ec;
  timer_.cancel();
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  if (attached_) ctx_.worker.detach(robot_id_);
  ctx_.stats.connection_closed();
  if (ctx_.on_closed) ctx_.on_closed(this);
}

}  // namespace fieldbrain::server
