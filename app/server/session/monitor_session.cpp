#include "app/server/session/monitor_session.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "app/server/protocol/handshake.h"
#include "app/server/session/access_token.h"
#include "app/server/session/monitor_commands.h"

namespace fieldbrain::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using nlohmann::json;

MonitorSession::MonitorSession(tcp::socket socket, MonitorContext& ctx)
    : socket_(std::move(socket)),
      executor_(socket_.get_executor()),
      legacy_timer_(executor_),
      pace_timer_(executor_),
      ctx_(ctx),
      log_(ctx.stats, ctx.config.log_lines_per_minute),
      buf_(ctx.config.max_json_line) {
  // A small kernel send buffer, so a subscriber that stops reading reaches its bounded line
  // queue quickly instead of parking megabytes in the kernel.
  boost::system::error_code ec;
  socket_.set_option(asio::socket_base::send_buffer_size(32 * 1024), ec);
  const auto ep = socket_.remote_endpoint(ec);
  peer_address_ = ec ? std::string("?") : ep.address().to_string();
  who_ = "monitor client " + peer_address_;
  loopback_ = !ec && is_local_peer(peer_address_);
  // The token guards remote access; local tools (and the legacy push clients) need none.
  authenticated_ = ctx.config.monitor_token.empty() || loopback_;
}

void MonitorSession::start() {
  reply(monitor_welcome_line());
  if (ctx_.config.legacy_push && authenticated_) start_legacy_push_timer();
  read_line();
}

// A client of the 2025-08-20 generation connects and only listens; one that has said nothing
// after legacy_push_after_s is served as one.
void MonitorSession::start_legacy_push_timer() {
  legacy_timer_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(ctx_.config.legacy_push_after_s)));
  legacy_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->closed_ || self->heard_from_ || self->legacy_push_) return;
    self->legacy_push_ = true;
    self->ctx_.worker.add_period(1);
    if (self->log_.allow("monitor silent push client", self->who_)) {
      spdlog::info("{}: silent, pushing telemetry every cycle (2025-08-20 format)", self->who_);
    }
  });
}

void MonitorSession::stop_legacy_push() {
  legacy_timer_.cancel();
  if (!legacy_push_) return;
  legacy_push_ = false;
  ctx_.worker.remove_period(1);
}

void MonitorSession::read_line() {
  asio::async_read_until(
      socket_, buf_, '\n',
      [self = shared_from_this()](const boost::system::error_code& ec, size_t n) {
        if (self->closed_) return;
        if (ec == asio::error::not_found) {
          self->heard_from_ = true;
          self->reply(monitor_error("", "request line too long"));
          self->buf_.consume(self->buf_.size());
          if (self->count_bad("request line too long")) return;
          return self->read_line();
        }
        if (ec) return self->close(ec.message());
        std::string line(asio::buffers_begin(self->buf_.data()),
                         asio::buffers_begin(self->buf_.data()) + n);
        self->buf_.consume(n);
        self->on_line(line);
      });
}

void MonitorSession::on_line(const std::string& line) {
  if (!heard_from_) {
    heard_from_ = true;
    // It talks: an ef2bdb8-style client after all. Its next line should be its reply, so
    // pushed lines not yet on their way go too.
    const bool was_pushing = legacy_push_;
    stop_legacy_push();
    if (was_pushing) drop_queued_pushes();
  }
  const MonitorCommand cmd = parse_monitor_command(line);
  if (cmd.name.empty()) {
    // Blank lines get no reply, but a connection that sends nothing else is cut off.
    if (count_bad("blank lines")) return;
    return read_line();
  }
  if (!authenticated_) {
    if (cmd.name == "auth" && cmd.args.size() == 1 &&
        tokens_equal(cmd.args[0], ctx_.config.monitor_token)) {
      authenticated_ = true;
      consecutive_bad_ = 0;
      reply(monitor_success("auth", {{"authenticated", true}}));
      return read_line();
    }
    reply(monitor_error(cmd.name == "auth" ? "auth" : cmd.text,
                        "authentication required: send 'auth <monitor_token>' first"));
    if (log_.allow("monitor request without a token", who_)) {
      spdlog::warn("{}: request without a valid token", who_);
    }
    if (count_bad("requests without a valid token")) return;
    return read_line();
  }
  on_command(cmd);
}

bool MonitorSession::count_bad(const std::string& why) {
  if (++consecutive_bad_ < ctx_.config.max_bad_frames) return false;
  ctx_.stats.error(kCodeInvalidMessage, "monitor " + peer_address_,
                   std::to_string(consecutive_bad_) + " " + why + " in a row, closing",
                   log_.allow_own(who_));
  close("too many bad requests");
  return true;
}

// The commands this session answers itself, on the I/O thread: name -> handler, which returns
// true when it has replied (false: the command goes on to the brain worker, monitor_commands.h).
const std::map<std::string, bool (MonitorSession::*)(const MonitorCommand&)>&
MonitorSession::own_commands() {
  static const std::map<std::string, bool (MonitorSession::*)(const MonitorCommand&)> table = {
      {"ping", &MonitorSession::ping},
      {"connection_stats", &MonitorSession::connection_stats},
      {"pattern_stats", &MonitorSession::pattern_stats},
      {"subscribe", &MonitorSession::subscribe},
      {"save", &MonitorSession::limit_save},
  };
  return table;
}

void MonitorSession::on_command(const MonitorCommand& cmd) {
  const bool known =
      std::find_if(monitor_commands().begin(), monitor_commands().end(), [&](const std::string& c) {
        return c.compare(0, c.find(' '), cmd.name) == 0;
      }) != monitor_commands().end();
  if (!known) {
    reply(monitor_unknown(cmd.text));
    if (count_bad("unknown commands")) return;
    return read_line();
  }
  consecutive_bad_ = 0;
  const auto own = own_commands().find(cmd.name);
  if (own != own_commands().end() && (this->*own->second)(cmd)) return read_line();
  answer_on_worker(cmd);
}

bool MonitorSession::ping(const MonitorCommand& cmd) {
  reply(monitor_pong(cmd.text, ctx_.stats.uptime_s()));
  return true;
}

bool MonitorSession::connection_stats(const MonitorCommand& cmd) {
  reply(monitor_success(cmd.text, ctx_.stats.connection_stats_json()));
  return true;
}

bool MonitorSession::pattern_stats(const MonitorCommand& cmd) {
  reply(monitor_success(cmd.text, json::array()));  // the original's, always empty
  return true;
}

bool MonitorSession::subscribe(const MonitorCommand& cmd) {
  long long n = 1;
  try {
    n = cmd.args.empty() ? 1 : std::stoll(cmd.args[0]);
  } catch (const std::exception&) {
    n = 0;
  }
  if (n < 1) {
    reply(monitor_error(cmd.text, "usage: subscribe <every_n_cycles>, n >= 1"));
    return true;
  }
  if (subscribe_every_ > 0) ctx_.worker.remove_period(subscribe_every_);
  subscribe_every_ = n;
  ctx_.worker.add_period(n);
  reply(monitor_success(cmd.text, {{"subscribed", true},
                                   {"every_n_cycles", n},
                                   {"queue_limit", ctx_.config.subscriber_queue}}));
  return true;
}

// Saves touch every robot's brain: one per monitor_save_interval_s, server-wide. Replies only
// when refused; an allowed save is the worker's (monitor_commands.cpp).
bool MonitorSession::limit_save(const MonitorCommand& cmd) {
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - ctx_.last_save).count();
  if (ctx_.saved_once && since < ctx_.config.monitor_save_interval_s) {
    reply(monitor_error(cmd.text, "save rate-limited: the next save is allowed in " +
                                      std::to_string(ctx_.config.monitor_save_interval_s - since) +
                                      " s (monitor_save_interval_s)"));
    return true;
  }
  ctx_.saved_once = true;
  ctx_.last_save = now;
  return false;
}

void MonitorSession::answer_on_worker(const MonitorCommand& cmd) {
  auto self = shared_from_this();
  // Past the monitors' share of the brain thread (monitor_work_budget.h): wait for it.
  const auto now = std::chrono::steady_clock::now();
  const auto start = ctx_.work_budget.next_start(now);
  if (start > now) {
    pace_timer_.expires_at(start);
    pace_timer_.async_wait([self, cmd](const boost::system::error_code& ec) {
      if (ec || self->closed_) return;
      self->answer_on_worker(cmd);
    });
    return;
  }
  auto work = asio::make_work_guard(executor_);
  const size_t clients = ctx_.monitor_clients ? ctx_.monitor_clients() : 0;
  const bool queued = ctx_.worker.query([self, work, cmd, clients](BrainWorker& w) {
    const auto began = std::chrono::steady_clock::now();
    std::string line;
    try {
      const MonitorAnswer answer = brain_command(cmd.name);
      line = answer ? answer(MonitorQuery{w, self->ctx_.stats, clients, cmd})
                    : monitor_unknown(cmd.text);
    } catch (const std::exception& e) {
      line = monitor_error(cmd.text, e.what());
    }
    const auto cost = std::chrono::steady_clock::now() - began;
    asio::post(self->executor_, [self, cost, line = std::move(line)]() mutable {
      self->ctx_.work_budget.spent(cost, std::chrono::steady_clock::now());
      if (self->closed_) return;
      self->reply(std::move(line));
      self->read_line();
    });
  });
  if (!queued) {
    reply(monitor_error(cmd.text, "server shutting down"));
    close("server shutting down");
  }
}

void MonitorSession::push(const TelemetryPush& line) {
  if (closed_) return;
  if (legacy_push_) return queue_push(line.legacy_line());
  if (subscribe_every_ <= 0 || line.cycle() % subscribe_every_ != 0) return;
  queue_push(line.line());
}

void MonitorSession::queue_push(const std::string& line) {
  if (queued_pushes_ >= ctx_.config.subscriber_queue ||
      out_bytes_ + line.size() > ctx_.config.max_write_queue_bytes) {
    ++dropped_;
    ctx_.stats.subscriber_drop();
    return;
  }
  ++queued_pushes_;
  out_bytes_ += line.size();
  out_.push_back(line);
  is_push_.push_back(true);
  if (!writing_) do_write();
}

void MonitorSession::drop_queued_pushes() {
  // The front entry may be in an async_write; everything behind it can go.
  size_t i = writing_ ? 1 : 0;
  while (i < out_.size()) {
    if (!is_push_[i]) {
      ++i;
      continue;
    }
    out_bytes_ -= out_[i].size();
    --queued_pushes_;
    out_.erase(out_.begin() + static_cast<std::ptrdiff_t>(i));
    is_push_.erase(is_push_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

void MonitorSession::reply(std::string line) {
  if (closed_) return;
  if (out_bytes_ + line.size() > ctx_.config.max_write_queue_bytes) {
    // Replies are never dropped, so a client that asks without reading is cut off.
    ctx_.stats.error(kCodeMessageTooLarge, "monitor " + peer_address_,
                     "more than " + std::to_string(ctx_.config.max_write_queue_bytes) +
                         " reply bytes unread (max_write_queue_bytes), closing",
                     log_.allow_own(who_));
    return close("not reading its replies");
  }
  out_bytes_ += line.size();
  out_.push_back(std::move(line));
  is_push_.push_back(false);
  if (!writing_) do_write();
}

void MonitorSession::do_write() {
  if (out_.empty()) {
    writing_ = false;
    return;
  }
  writing_ = true;
  asio::async_write(socket_, asio::buffer(out_.front()),
                    [self = shared_from_this()](const boost::system::error_code& ec, size_t) {
                      if (self->closed_) return;
                      if (ec) return self->close("send failed: " + ec.message());
                      if (self->is_push_.front()) --self->queued_pushes_;
                      self->out_bytes_ -= self->out_.front().size();
                      self->out_.pop_front();
                      self->is_push_.pop_front();
                      self->do_write();
                    });
}

void MonitorSession::close(const std::string& why) {
  if (closed_) return;
  closed_ = true;
  spdlog::debug("{} closed ({})", who_, why);
  log_.closing(who_);
  stop_legacy_push();
  pace_timer_.cancel();
  if (subscribe_every_ > 0) ctx_.worker.remove_period(subscribe_every_);
  boost::system::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  if (ctx_.on_closed) ctx_.on_closed(this);
}

}  // namespace fieldbrain::server
