#include "app/server/session/server.h"

#include <spdlog/spdlog.h>

#include "app/server/stats/descriptor_reserve.h"

namespace fieldbrain::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

WorkerOptions worker_options(const ServerConfig& c, FleetMembership* fleet) {
  WorkerOptions o;
  o.fleet = fleet;
  o.state_dir = c.state_dir;
  o.save_every_cycles = c.save_every_cycles;
  if (!c.record_dir.empty()) {
    RecorderLimits limits;
    limits.max_bytes = c.record_max_bytes;
    limits.max_sessions = c.record_max_sessions;
    limits.fd_reserve = c.fd_reserve;
    o.recorder = std::make_shared<Recorder>(c.record_dir, c.brain, limits);
  }
  o.policy = c.robots;
  o.robot_report_interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(c.robot_report_interval_s));
  return o;
}

void listen_on(tcp::acceptor& acceptor, const std::string& host, int port, const char* what) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) throw std::runtime_error(std::string("bad host '") + host + "': " + ec.message());
  const tcp::endpoint ep(address, static_cast<uint16_t>(port));
  acceptor.open(ep.protocol(), ec);
  // SO_REUSEADDR only (never SO_REUSEPORT: two servers must not share a port silently).
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    throw std::runtime_error(std::string("cannot listen on ") + what + " port " +
                             std::to_string(port) + ": " + ec.message());
  }
}

}  // namespace

Server::Server(ServerConfig config, BrainEngine& engine, FleetMembership* fleet)
    : config_(std::move(config)),
      engine_(engine),
      stats_(config_.log_lines_per_kind),
      worker_(engine_, worker_options(config_, fleet), stats_),
      work_(asio::make_work_guard(io_)),
      acceptor_(io_),
      monitor_acceptor_(io_),
      shutdown_deadline_(io_),
      robot_accept_pause_(io_),
      monitor_accept_pause_(io_),
      log_report_timer_(io_),
      session_ctx_{config_, worker_, stats_, false, 8.0f, nullptr, {}},
      monitor_ctx_{config_, worker_, stats_, nullptr, nullptr, {}, false,
                   MonitorWorkBudget(config_.monitor_work_share)} {
  session_ctx_.gpu = engine_.on_gpu();
  session_ctx_.input_limits = engine_.input_limits();
  auto release = [](std::map<std::string, int>& counts, const std::string& address) {
    auto it = counts.find(address);
    if (it != counts.end() && --it->second <= 0) counts.erase(it);
  };
  session_ctx_.on_closed = [this, release](RobotSession* s) {
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
      if (it->get() == s) {
        release(robots_per_address_, s->peer_address());
        sessions_.erase(it);
        break;
      }
    }
    on_session_closed();
  };
  monitor_ctx_.monitor_clients = [this] { return monitors_.size(); };
  monitor_ctx_.on_closed = [this, release](MonitorSession* s) {
    for (auto it = monitors_.begin(); it != monitors_.end(); ++it) {
      if (it->get() == s) {
        release(monitors_per_address_, s->peer_address());
        monitors_.erase(it);
        break;
      }
    }
  };
}

Server::~Server() { stop(); }

void Server::start() {
  if (started_) return;
  config_.validate();
  listen_on(acceptor_, config_.host, config_.port, "robot");
  port_ = acceptor_.local_endpoint().port();
  if (config_.monitor_port >= 0) {
    listen_on(monitor_acceptor_, config_.monitor_host, config_.monitor_port, "monitor");
    monitor_port_ = monitor_acceptor_.local_endpoint().port();
    if (!monitor_acceptor_.local_endpoint().address().is_loopback() &&
        config_.monitor_token.empty()) {
      spdlog::warn(
          "monitor port {} listens on {} without a monitor_token: anyone who can reach "
          "it can read telemetry and ask for saves",
          monitor_port_, config_.monitor_host);
    }
  }
  worker_.set_publisher([this](int64_t cycle, std::string line) {
    for (const auto& listener : telemetry_listeners_) listener(cycle, line);
    auto push = std::make_shared<TelemetryPush>(cycle, std::move(line) + "\n");
    asio::post(io_, [this, push] {
      for (const auto& m : monitors_) m->push(*push);
    });
  });
  worker_.start();
  report_suppressed_logs();
  accept_robot();
  if (monitor_acceptor_.is_open()) accept_monitor();
  started_ = true;
  io_thread_ = std::thread([this] {
    for (;;) {
      try {
        io_.run();
        break;
      } catch (const std::exception& e) {
        // A handler must never take the server down; log and keep serving.
        spdlog::error("I/O handler threw: {}", e.what());
      }
    }
  });
  spdlog::info("fieldbrain server listening on {}:{} (monitor {})", config_.host, port_,
               monitor_acceptor_.is_open() ? std::to_string(monitor_port_) : "off");
}

// The server-wide log budget's "N more suppressed" lines, also when a flood has stopped.
void Server::report_suppressed_logs() {
  log_report_timer_.expires_after(LogGate::kReportEvery);
  log_report_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || shutting_down_) return;
    stats_.report_suppressed();
    report_suppressed_logs();
  });
}

void Server::on_session_closed() {
  if (shutting_down_ && sessions_.empty()) shutdown_deadline_.cancel();
}

namespace {

std::string address_of(const tcp::socket& socket) {
  boost::system::error_code ec;
  const auto ep = socket.remote_endpoint(ec);
  return ec ? std::string("?") : ep.address().to_string();
}

void refuse(tcp::socket& socket) {
  boost::system::error_code ignored;
  socket.close(ignored);
}

}  // namespace

bool Server::over_cap(const char* port, size_t total, size_t max_total,
                      const std::map<std::string, int>& per_address, const std::string& address) {
  auto it = per_address.find(address);
  const int from_address = it == per_address.end() ? 0 : it->second;
  const bool too_many = total >= max_total;
  if (!too_many && from_address < config_.max_connections_per_address) return false;
  uint64_t n = 0;
  if (refused_log_.due(std::chrono::steady_clock::now(), &n)) {
    spdlog::warn("{} connection from {} refused: {} ({} refused in the last 10 s)", port, address,
                 too_many ? "server at its connection cap (" + std::to_string(max_total) + ")"
                          : std::to_string(from_address) +
                                " connections from this address (max_connections_per_address)",
                 n);
  }
  return true;
}

void Server::accept_failed(const boost::system::error_code& ec, asio::steady_timer& timer,
                           void (Server::*again)()) {
  // Out of descriptors (or buffers) the error repeats at once: back off 50 ms, doubling to
  // 1 s while it persists, and log once per interval.
  accept_backoff_ = std::min<std::chrono::milliseconds>(
      std::chrono::milliseconds(1000),
      std::max<std::chrono::milliseconds>(std::chrono::milliseconds(50), accept_backoff_ * 2));
  uint64_t n = 0;
  if (accept_error_log_.due(std::chrono::steady_clock::now(), &n)) {
    spdlog::error("accept failed: {} ({} failures in the last 10 s); pausing accepts {} ms",
                  ec.message(), n, accept_backoff_.count());
  }
  timer.expires_after(accept_backoff_);
  timer.async_wait([this, again](const boost::system::error_code& e) {
    if (e || shutting_down_) return;
    (this->*again)();
  });
}

void Server::accept_robot() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || shutting_down_) return;
    if (ec) return accept_failed(ec, robot_accept_pause_, &Server::accept_robot);
    accept_backoff_ = std::chrono::milliseconds(0);
    const std::string address = address_of(socket);
    if (over_cap("robot", sessions_.size(), static_cast<size_t>(config_.max_connections),
                 robots_per_address_, address)) {
      refuse(socket);
    } else {
      auto session = std::make_shared<RobotSession>(std::move(socket), session_ctx_);
      sessions_.insert(session);
      ++robots_per_address_[address];
      session->start();
    }
    accept_robot();
  });
}

void Server::accept_monitor() {
  monitor_acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || shutting_down_) return;
    if (ec) return accept_failed(ec, monitor_accept_pause_, &Server::accept_monitor);
    const std::string address = address_of(socket);
    if (descriptors_low(config_.fd_reserve)) {
      // The last descriptors are for robots and saves (fd_reserve).
      uint64_t n = 0;
      if (refused_log_.due(std::chrono::steady_clock::now(), &n)) {
        spdlog::warn("monitor connection from {} refused: fewer than fd_reserve = {} file "
                     "descriptors free ({} refused in the last 10 s)",
                     address, config_.fd_reserve, n);
      }
      refuse(socket);
    } else if (over_cap("monitor", monitors_.size(),
                        static_cast<size_t>(config_.max_monitor_clients), monitors_per_address_,
                        address)) {
      refuse(socket);
    } else {
      auto m = std::make_shared<MonitorSession>(std::move(socket), monitor_ctx_);
      monitors_.insert(m);
      ++monitors_per_address_[address];
      m->start();
    }
    accept_monitor();
  });
}

void Server::begin_shutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  boost::system::error_code ec;
  acceptor_.close(ec);
  monitor_acceptor_.close(ec);
  robot_accept_pause_.cancel();
  monitor_accept_pause_.cancel();
  log_report_timer_.cancel();
  // Copies: draining/closing removes sessions from the sets.
  auto sessions = sessions_;
  for (const auto& s : sessions) s->drain();
  auto monitors = monitors_;
  for (const auto& m : monitors) m->close("server shutting down");
  work_.reset();  // io_.run() returns once the last session is gone
  // A robot that stopped reading could keep its last reply pending forever; after a grace
  // period every connection still open is closed regardless.
  shutdown_deadline_.expires_after(std::chrono::seconds(3));
  shutdown_deadline_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    auto left = sessions_;
    for (const auto& s : left) s->close("shutdown deadline");
  });
  on_session_closed();
}

void Server::stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  spdlog::info("shutting down: answering frames in flight, saving every robot");
  asio::post(io_, [this] { begin_shutdown(); });
  if (io_thread_.joinable()) io_thread_.join();
  worker_.stop();  // saves and releases the robots still attached
  stats_.report_suppressed(/*force=*/true);
  spdlog::info("server stopped ({} saves in total)", worker_.saves());
}

}  // namespace fieldbrain::server
