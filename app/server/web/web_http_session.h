// One HTTP connection to the web monitor: serves the embedded page and its files (GET/HEAD),
// and hands `/ws` upgrade requests to a WebSocketSession. Small requests only, with a timeout.
// With a `monitor_token` set, a browser on another machine opens `/?token=<token>` once; the
// reply sets an HttpOnly cookie that its later requests (files, the WebSocket) carry.
#pragma once

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <memory>
#include <string>

namespace fieldbrain::server::web {

class WebHub;

class WebHttpSession : public std::enable_shared_from_this<WebHttpSession> {
 public:
  // `token` empty: no access control (the monitor is loopback-only by default).
  WebHttpSession(boost::asio::ip::tcp::socket socket, WebHub& hub, size_t queue_limit,
                 std::string token);
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
  bool local_ = false;
  bool set_cookie_ = false;
  boost::beast::flat_buffer buffer_;
  std::unique_ptr<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
};

}  // namespace fieldbrain::server::web
