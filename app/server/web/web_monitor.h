// The web monitor (docs/web-monitor.md): an HTTP + WebSocket listener on `web_port` with its
// own I/O thread, so browsers never share a thread with the robot sockets, fed by the
// server's telemetry publisher and by brain-worker queries (web_hub.h).
//
// A WebSocket whose page comes from another origin is refused with 403 (web_origin.h).
// Limits (issue 24 item 2): HTTP connections are capped in total and per address, each must
// send its request within web_header_timeout_s, and none is accepted while fewer than
// fd_reserve descriptors are free: idle browsers can never take a robot's or a save's.
//
// Order: construct before Server::start() (it registers a telemetry listener), start() after
// it; Server::stop() before WebMonitor::stop() or destruction.
#pragma once

#include <boost/asio.hpp>
#include <cstdint>
#include <memory>
#include <thread>

#include "app/server/session/connection_limit.h"
#include "app/server/session/server.h"
#include "app/server/web/web_http_session.h"
#include "app/server/web/web_hub.h"

namespace fieldbrain::server::web {

class WebMonitor {
 public:
  explicit WebMonitor(Server& server);
  ~WebMonitor();

  // Binds web_host:web_port (throws std::runtime_error naming web_port when that fails) and
  // starts serving. Does nothing when web_port is -1.
  void start();
  void stop();  // idempotent

  bool enabled() const { return acceptor_.is_open(); }
  uint16_t port() const { return port_; }
  uint64_t dropped() const { return hub_.dropped(); }

 private:
  void accept();
  void admit(boost::asio::ip::tcp::socket socket);

  Server& server_;
  boost::asio::io_context io_;
  std::shared_ptr<WebLink> link_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_pause_;
  // HTTP connections (web_max_connections, _per_address); WebSockets are the hub's.
  ConnectionLimit http_limit_;
  WebHub hub_;
  // Whose pages may open the WebSocket (web_allowed_origins, parsed once), shared by the
  // connections.
  std::shared_ptr<const WebOrigins> origins_;
  std::thread thread_;
  uint16_t port_ = 0;
  bool started_ = false, stopped_ = false;
};

}  // namespace fieldbrain::server::web
