#include "app/server/web/web_monitor.h"

#include <spdlog/spdlog.h>

#include "app/server/stats/descriptor_reserve.h"
#include "app/server/web/web_http_session.h"

namespace fieldbrain::server::web {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

WebMonitor::WebMonitor(Server& server)
    : server_(server),
      link_(std::make_shared<WebLink>(io_)),
      acceptor_(io_),
      accept_pause_(io_),
      http_limit_(server.config().web_max_connections,
                  server.config().web_max_connections_per_address),
      hub_(io_, link_, server.config(), server.worker(), server.stats()) {
  if (server_.config().web_port < 0) return;
  auto origins = std::make_shared<WebOrigins>();
  origins->allowed = parse_allowed_origins(server_.config().web_allowed_origins);
  origins->machine_name = machine_host_name();
  origins_ = std::move(origins);
  server_.add_telemetry_listener(
      [this](int64_t, std::string line) { hub_.offer_telemetry(std::move(line)); });
}

WebMonitor::~WebMonitor() { stop(); }

void WebMonitor::start() {
  const ServerConfig& c = server_.config();
  if (started_ || c.web_port < 0) return;
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(c.web_host, ec);
  if (ec) throw std::runtime_error("config key 'web_host': bad address '" + c.web_host + "'");
  const tcp::endpoint ep(address, static_cast<uint16_t>(c.web_port));
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    throw std::runtime_error("config key 'web_port': cannot listen on " + c.web_host + ":" +
                             std::to_string(c.web_port) + ": " + ec.message());
  }
  port_ = acceptor_.local_endpoint().port();
  started_ = true;
  hub_.start();
  accept();
  thread_ = std::thread([this] {
    for (;;) {
      try {
        io_.run();
        break;
      } catch (const std::exception& e) {
        spdlog::error("web monitor handler threw: {}", e.what());
      }
    }
  });
  spdlog::info("web monitor on http://{}:{}/", c.web_host, port_);
}

void WebMonitor::accept() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors (or buffers): pause instead of spinning on the error.
      if (server_.stats().may_log("web accept failed")) {
        spdlog::error("web monitor: accept failed: {}; pausing accepts 100 ms", ec.message());
      }
      accept_pause_.expires_after(std::chrono::milliseconds(100));
      accept_pause_.async_wait([this](const boost::system::error_code& e) {
        if (!e) accept();
      });
      return;
    }
    admit(std::move(socket));
    accept();
  });
}

// Every connection is accepted, then kept or closed at once: the kernel's backlog would
// otherwise hold the refused ones, and a browser sees a closed connection at once.
void WebMonitor::admit(tcp::socket socket) {
  const ServerConfig& c = server_.config();
  boost::system::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  const std::string address = ec ? std::string("?") : peer.address().to_string();
  std::string why;
  ConnectionLimit::Ticket ticket;
  if (descriptors_low(c.fd_reserve)) {
    why = "fewer than fd_reserve = " + std::to_string(c.fd_reserve) +
          " file descriptors free (kept for robots and saves)";
  } else {
    ticket = http_limit_.admit(address, &why);
    if (!ticket) why = "web port " + why + " (web_max_connections, per address " +
                       std::to_string(c.web_max_connections_per_address) + ")";
  }
  if (!ticket) {
    if (server_.stats().may_log("web connection refused")) {
      spdlog::warn("web monitor: connection from {} refused: {}", address, why);
    }
    socket.close(ec);
    return;
  }
  WebHttpOptions options;
  options.queue_limit = c.subscriber_queue;
  options.token = c.monitor_token;
  options.header_timeout = std::chrono::milliseconds(
      static_cast<int64_t>(c.web_header_timeout_s * 1000.0));
  options.stats = &server_.stats();
  options.ticket = std::move(ticket);
  options.origins = origins_;
  std::make_shared<WebHttpSession>(std::move(socket), hub_, std::move(options))->start();
}

void WebMonitor::stop() {
  if (!started_ || stopped_) return link_->cut();
  stopped_ = true;
  asio::post(io_, [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
    accept_pause_.cancel();
    hub_.stop();
    io_.stop();  // HTTP connections still open are dropped with the io_context
  });
  if (thread_.joinable()) thread_.join();
  link_->cut();
}

}  // namespace fieldbrain::server::web
