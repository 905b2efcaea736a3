#include "app/server/web/web_monitor.h"

#include <spdlog/spdlog.h>

#include "app/server/web/web_http_session.h"

namespace fieldbrain::server::web {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

WebMonitor::WebMonitor(Server& server)
    : server_(server),
      link_(std::make_shared<WebLink>(io_)),
      acceptor_(io_),
      hub_(io_, link_, server.config(), server.worker(), server.stats()) {
  if (server_.config().web_port < 0) return;
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
    if (!ec) {
      std::make_shared<WebHttpSession>(std::move(socket), hub_, server_.config().subscriber_queue,
                                       server_.config().monitor_token)
          ->start();
    }
    accept();
  });
}

void WebMonitor::stop() {
  if (!started_ || stopped_) return link_->cut();
  stopped_ = true;
  asio::post(io_, [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
    hub_.stop();
    io_.stop();  // HTTP connections still open are dropped with the io_context
  });
  if (thread_.joinable()) thread_.join();
  link_->cut();
}

}  // namespace fieldbrain::server::web
