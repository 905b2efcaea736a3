// One HTTP connection to the web monitor: serves the embedded page and its files (GET/HEAD),
// and hands `/ws` upgrade requests to a WebSocketSession. Small requests only, with a timeout.
// With a `monitor_token` set, a browser on another machine opens `/?token=<token>` once; the
// reply sets an HttpOnly cookie that its later requests (files, the WebSocket) carry.
// The connection holds its place under the web port's HTTP cap (a ConnectionLimit ticket)
// until it closes or becomes a WebSocket (those are capped by the hub), and must deliver each
// request's headers within `header_timeout` (web_header_timeout_s), idle keep-alive included.
#pragma once

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "app/server/protocol/web_origin.h"
#include "app/server/session/connection_limit.h"

namespace fieldbrain::server {
class ServerStats;
}

namespace fieldbrain::server::web {

class WebHub;

// Whose pages may open the WebSocket (web_origin.h): web_allowed_origins, parsed once, and
// this machine's name.
struct WebOrigins {
  std::vector<WebOrigin> allowed;
  std::string machine_name;
};

struct WebHttpOptions {
  size_t queue_limit = 256;  // subscriber_queue, for a WebSocket this connection becomes
  std::string token;         // monitor_token; empty: no access control (loopback by default)
  std::chrono::milliseconds header_timeout{5000};
  ServerStats* stats = nullptr;    // the server-wide log budget (null: log every line)
  ConnectionLimit::Ticket ticket;  // its place under web_max_connections
  std::shared_ptr<const WebOrigins> origins;  // null: every origin (tools that embed the page)
};

class WebHttpSession : public std::enable_shared_from_this<WebHttpSession> {
 public:
  WebHttpSession(boost::asio::ip::tcp::socket socket, WebHub& hub, WebHttpOptions options);
  void start() { read(); }

 private:
  void read();
  void on_request();
  void respond(boost::beast::http::response<boost::beast::http::string_body> response);
  // Whether this request may see the monitor; sets `set_cookie_` when the token came in the
  // query string, so the browser's later requests carry it.
  bool allowed(const boost::beast::http::request<boost::beast::http::string_body>& request);

  boost::beast::tcp_stream stream_;
  WebHub& hub_;
  size_t queue_limit_;
  std::string token_;
  std::chrono::milliseconds header_timeout_;
  ServerStats* stats_;
  ConnectionLimit::Ticket ticket_;
  std::shared_ptr<const WebOrigins> origins_;
  bool local_ = false;
  bool set_cookie_ = false;
  boost::beast::flat_buffer buffer_;
  std::unique_ptr<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
};

}  // namespace fieldbrain::server::web
