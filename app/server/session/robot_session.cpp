#include "app/server/session/robot_session.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <cstring>

#include "app/server/protocol/printable.h"

namespace fieldbrain::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr size_t kReadChunk = 16 * 1024;  // one read; a codec holds at most a message + this
constexpr size_t kLingerBytes = 64 * 1024;
constexpr auto kLingerTime = std::chrono::seconds(2);

CodecLimits codec_limits(const ServerConfig& c) {
  CodecLimits l;
  l.max_frame_floats = c.max_frame_floats;
  l.max_dim = c.max_dim;
  l.max_line = c.max_json_line;
  l.default_sensory = c.brain.value("sensory_dim", 16);
  l.default_motor = c.brain.value("motor_dim", 4);
  return l;
}

}  // namespace

RobotSession::RobotSession(tcp::socket socket, SessionContext& ctx)
    : socket_(std::move(socket)),
      executor_(socket_.get_executor()),
      timer_(executor_),
      ctx_(ctx),
      log_(ctx.stats, ctx.config.log_lines_per_minute) {
  boost::system::error_code ec;
  auto ep = socket_.remote_endpoint(ec);
  peer_address_ = ec ? std::string("?") : ep.address().to_string();
  peer_ = ec ? peer_address_ : peer_address_ + ":" + std::to_string(ep.port());
  socket_.set_option(tcp::no_delay(true), ec);
  socket_.set_option(asio::socket_base::keep_alive(true), ec);
}

const std::string& RobotSession::who() const { return attached_ ? who_ : peer_; }

void RobotSession::start() {
  connected_at_ = last_activity_ = std::chrono::steady_clock::now();
  ctx_.stats.connection_opened();
  spdlog::debug("new connection from {}", peer_);
  arm_timer();
  pump();
}

void RobotSession::drain() {
  draining_ = true;
  if (!busy_) close_after_writes("server shutting down");
}

void RobotSession::touch() { last_activity_ = std::chrono::steady_clock::now(); }

// One timer serves both deadlines: the handshake must come within handshake_timeout_s of the
// connect, and afterwards some byte within idle_timeout_s. A message in the brain never times
// out on the robot's account.
void RobotSession::arm_timer() {
  if (closed_ || lingering_) return;
  using namespace std::chrono;
  const auto now = steady_clock::now();
  const auto limit = duration_cast<steady_clock::duration>(
      duration<double>(attached_ ? ctx_.config.idle_timeout_s : ctx_.config.handshake_timeout_s));
  const auto since = attached_ ? last_activity_ : connected_at_;
  auto deadline = since + limit;
  if (!busy_ && now >= deadline) {
    report(attached_ ? kCodeConnectionTimeout : kCodeHandshakeTimeout,
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

// --- the state machine -----------------------------------------------------------------------

void RobotSession::pump() {
  while (!closed_ && !closing_ && !busy_ && !reading_) {
    if (draining_) return close_after_writes("server shutting down");
    if (out_.bytes() > ctx_.config.max_write_queue_bytes) {
      // Back-pressure: the client is not reading its replies. Read nothing more until it
      // does (do_write resumes us); the idle timeout closes it if it never does.
      if (!paused_logged_) {
        paused_logged_ = true;
        report(kCodeMessageTooLarge, std::to_string(out_.bytes()) + " reply bytes unsent (limit " +
                                         std::to_string(ctx_.config.max_write_queue_bytes) +
                                         "): not reading until the client reads");
      }
      return;
    }
    if (!codec_) return read_some();
    WireMessage msg = codec_->decode();
    if (std::holds_alternative<NeedMore>(msg)) return read_some();
    handle(std::move(msg));
  }
}

void RobotSession::read_some() {
  reading_ = true;
  uint8_t* at;
  size_t room;
  if (lingering_ || !codec_) {
    // The opening bytes (or bytes to discard) land in opening_; the codec takes them over.
    const size_t have = lingering_ ? 0 : opening_.size();
    opening_.resize(have + 4096);
    at = opening_.data() + have;
    room = 4096;
  } else {
    at = codec_->prepare(kReadChunk);
    room = kReadChunk;
  }
  socket_.async_read_some(
      asio::buffer(at, room),
      [self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
        self->reading_ = false;
        if (self->closed_) return;
        if (self->lingering_) {
          self->discarded_ += n;
          if (ec || self->discarded_ > kLingerBytes) return self->close(self->close_reason_);
          return self->read_some();
        }
        if (self->codec_) {
          self->codec_->commit(ec ? 0 : n);
        } else {
          self->opening_.resize(self->opening_.size() - 4096 + (ec ? 0 : n));
        }
        if (ec) {
          return self->close(ec == asio::error::eof ? "closed by the client" : ec.message());
        }
        self->touch();
        if (!self->codec_) self->on_opening();
        self->pump();
      });
}

void RobotSession::on_opening() {
  const auto opening = classify_opening(opening_.data(), opening_.size());
  if (!opening) return;  // pump() reads more
  codec_ = make_robot_codec(*opening, codec_limits(ctx_.config));
  std::memcpy(codec_->prepare(opening_.size()), opening_.data(), opening_.size());
  codec_->commit(opening_.size());
  opening_.clear();
  opening_.shrink_to_fit();
  spdlog::debug("{}: {} opening", peer_, codec_->name());
}

void RobotSession::handle(WireMessage msg) {
  if (auto* hs = std::get_if<WireHandshake>(&msg)) return on_handshake(std::move(*hs));
  if (auto* s = std::get_if<WireSensors>(&msg)) return on_sensors(std::move(*s));
  if (auto* r = std::get_if<WireRejected>(&msg)) return on_rejected(*r);
  if (auto* u = std::get_if<WireUnknown>(&msg)) {
    // ef2bdb8: ERROR [1.0], payload consumed, connection kept; a run of them closes.
    report(kCodeUnknownType, "unknown " + u->what + ", answered as unknown");
    std::string reply = out_.take_buffer();
    codec_->encode_unknown(u->what, reply);
    send(std::move(reply));
    return count_bad("unknown or rejected messages");
  }
  auto& fatal = std::get<WireFatal>(msg);
  report(fatal.code, fatal.why + ", closing");
  if (!fatal.reply.empty()) send(std::move(fatal.reply));
  close_after_writes(fatal.why, /*linger=*/true);
}

void RobotSession::on_handshake(WireHandshake hs) {
  if (attached_) {
    // ef2bdb8: the existing session's reply again (idempotent), logged as 2004.
    report(kCodeDuplicateSession, "duplicate handshake, answered as before");
    return send(handshake_reply_);
  }
  start_attach(std::move(hs));
}

namespace {

// Why a finite frame's values exceed the brain's bounds ("" when they do not).
std::string out_of_range(const std::vector<float>& values, float reward,
                         const BrainEngine::InputLimits& limits) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::fabs(values[i]) > limits.max_sensor) {
      return fmt::format("sensor value {} ({:g}) is outside [-{:g}, {:g}]", i, values[i],
                         limits.max_sensor, limits.max_sensor);
    }
  }
  if (std::fabs(reward) > limits.max_reward) {
    return fmt::format("reward {:g} is outside [-{:g}, {:g}]", reward, limits.max_reward,
                       limits.max_reward);
  }
  return "";
}

}  // namespace

void RobotSession::on_sensors(WireSensors s) {
  ctx_.stats.sensory_frame();
  WireRejected bad{WireRejected::Kind::Frame, kCodeInvalidMessage, ""};
  if (!attached_) {
    bad.code = kCodeSessionNotFound;
    bad.why = "sensors before a handshake";
  } else if (s.values.size() != static_cast<size_t>(sensory_dim_)) {
    bad.why = "sensory frame of " + std::to_string(s.values.size()) + " values, expected " +
              std::to_string(sensory_dim_);
  } else {
    bool finite = std::isfinite(s.reward);
    for (float v : s.values) finite = finite && std::isfinite(v);
    if (!finite) {
      bad.why = "sensory frame with NaN or Inf";
    } else {
      bad.why = out_of_range(s.values, s.reward, ctx_.input_limits);
    }
  }
  if (!bad.why.empty()) return on_rejected(bad);
  start_step(std::move(s.values), s.reward);
}

// A rejected message never reaches the brain: a binary robot gets a safe stop (M zeros, or
// ef2bdb8's empty ACTION before a handshake), a JSON robot an error object; it is logged and
// counted, and a run of them closes.
void RobotSession::on_rejected(const WireRejected& r) {
  switch (r.kind) {
    case WireRejected::Kind::Handshake:
      return refuse_handshake(r.code, r.why);
    case WireRejected::Kind::Silent:
      return count_bad("blank or empty messages");
    case WireRejected::Kind::Frame:
      break;
  }
  report(r.code, r.why + "; answered as rejected");
  std::string reply = out_.take_buffer();
  codec_->encode_rejected(r.code, r.why, attached_ ? motor_dim_ : 0, reply);
  send(std::move(reply));
  count_bad("rejected messages");
}

void RobotSession::refuse_handshake(int code, const std::string& why) {
  report(code, "handshake refused: " + why);
  std::string reply = out_.take_buffer();
  codec_->encode_refused(code, why, reply);
  send(std::move(reply));
  // HEAD clients treat any reply as a handshake; closing makes them retry cleanly.
  if (codec_->closes_after_refusal()) return close_after_writes("handshake refused");
  count_bad("refused handshakes");
}

void RobotSession::count_bad(const char* what) {
  if (++consecutive_bad_ < ctx_.config.max_bad_frames) return;
  report(kCodeInvalidMessage,
         std::to_string(consecutive_bad_) + " " + what + " in a row (max_bad_frames), closing");
  close_after_writes("too many bad frames", /*linger=*/true);
}

// --- brain round trips ---------------------------------------------------------------------

void RobotSession::start_attach(WireHandshake hs) {
  busy_ = true;
  auto self = shared_from_this();
  auto work = asio::make_work_guard(executor_);
  BrainClaim claim;
  claim.handshake = hs;  // the worker's copy; the reply below is built from `hs`
  claim.peer_address = peer_address_;
  claim.framing = codec_->name();
  // A newer connection took this robot's brain (this one went silent): close.
  claim.on_taken_over = [weak = std::weak_ptr<RobotSession>(self), executor = executor_] {
    asio::post(executor, [weak] {
      if (auto s = weak.lock()) s->close("brain taken over by a newer connection");
    });
  };
  const bool queued =
      ctx_.worker.attach(std::move(claim), [self, work, hs = std::move(hs)](AttachResult r) {
        asio::post(self->executor_, [self, hs, r = std::move(r)] { self->on_attached(hs, r); });
      });
  if (!queued) {
    busy_ = false;
    close("server shutting down");
  }
}

void RobotSession::on_attached(const WireHandshake& hs, const AttachResult& r) {
  busy_ = false;
  if (closed_) {
    // The robot left while its brain was being made: release it again.
    if (r.ok) ctx_.worker.detach(r.id);
    return;
  }
  if (!r.ok) {
    refuse_handshake(r.code ? r.code : kCodeInvalidCapabilities, printable(r.error, 200));
    return pump();
  }
  attached_ = true;
  robot_id_ = r.id;
  robot_key_ = r.key;
  who_ = printable(r.key);
  sensory_dim_ = hs.sensory_dim;
  motor_dim_ = hs.motor_dim;
  consecutive_bad_ = 0;
  codec_->set_sensory_dim(sensory_dim_);
  ctx_.stats.handshake_done();
  spdlog::info("{}: handshake complete as '{}' (framing {}, {} sensors, {} motors, cycle {}{})",
               peer_, who_, codec_->name(), sensory_dim_, motor_dim_, r.cycle,
               r.resumed ? ", resumed" : "");
  HandshakeAccepted a;
  a.key = r.key;
  a.sensory_dim = sensory_dim_;
  a.motor_dim = motor_dim_;
  a.cycle = r.cycle;
  a.token = r.token;
  a.caps = hs.caps;
  a.gpu = ctx_.gpu;
  a.server_caps = ctx_.server_caps;
  handshake_reply_.clear();
  codec_->encode_accepted(a, handshake_reply_);
  send(handshake_reply_);
  pump();
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
  if (r.motors.size() != static_cast<size_t>(motor_dim_)) {
    r.motors.assign(motor_dim_, 0.0f);  // the robot was released under us
  }
  consecutive_bad_ = 0;
  std::string reply = out_.take_buffer();
  if (r.code != 0) {
    // The brain could not answer this frame (its state stopped being finite and was
    // replaced): an error for a JSON robot, a safe stop for a binary one. The worker has
    // logged the event once; the robot did nothing wrong, so this is no bad frame.
    codec_->encode_rejected(r.code, r.error, motor_dim_, reply);
  } else {
    codec_->encode_motors(r.motors, r.cycle, reply);
  }
  send(std::move(reply));
  pump();
}

// --- logging, writing, closing -------------------------------------------------------------

void RobotSession::report(int code, const std::string& message) {
  ctx_.stats.error(code, who(), message, log_.allow_own(who()));
}

void RobotSession::send(std::string bytes) {
  if (closed_ || bytes.empty()) return;
  out_.push(std::move(bytes));
  if (!writing_) do_write();
}

void RobotSession::do_write() {
  if (out_.empty()) {
    writing_ = false;
    if (closing_) {
      if (linger_after_writes_) return linger();
      return close(close_reason_);
    }
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(out_.front()),
                    [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                      if (self->closed_) return;
                      if (ec) return self->close("send failed: " + ec.message());
                      self->out_.pop_front();
                      self->do_write();
                      if (self->out_.bytes() <= self->ctx_.config.max_write_queue_bytes / 2) {
                        self->paused_logged_ = false;
                        self->pump();
                      }
                    });
}

void RobotSession::close_after_writes(const std::string& why, bool linger) {
  if (closed_ || closing_) return;
  closing_ = true;
  close_reason_ = why;
  linger_after_writes_ = linger;
  if (!writing_ && out_.empty()) do_write();
}

void RobotSession::linger() {
  if (closed_ || lingering_) return;
  lingering_ = true;
  boost::system::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_send, ec);
  timer_.expires_after(kLingerTime);
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& e) {
    if (e == asio::error::operation_aborted) return;
    self->close(self->close_reason_);
  });
  if (!reading_) read_some();  // an outstanding read sees lingering_ when it completes
}

void RobotSession::close(const std::string& why) {
  if (closed_) return;
  closed_ = true;
  if (attached_) {
    spdlog::info("{}: connection closed ({})", who(), why);
  } else {
    spdlog::debug("{}: connection closed ({})", who(), why);
  }
  log_.closing(who());
  boost::system::error_code ec;
  timer_.cancel();
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  if (attached_) ctx_.worker.detach(robot_id_);
  ctx_.stats.connection_closed();
  if (ctx_.on_closed) ctx_.on_closed(this);
}

}  // namespace fieldbrain::server
