// A toy-brain server with its web monitor on a free port, and a one-shot HTTP client for it:
// shared by the web monitor's tests and the /metrics tests.
#pragma once

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <functional>
#include <memory>
#include <string>

#include "app/server/web/web_monitor.h"
#include "test/server/toy_engine.h"

namespace fieldbrain::server::testing {

// The server and the web monitor, started in the order web_monitor.h asks for.
struct WebServer {
  explicit WebServer(std::string monitor_token = "")
      : WebServer([&](ServerConfig& c) { c.monitor_token = monitor_token; }) {}
  // The test config with web_port 0, changed by `tweak` before the server starts.
  explicit WebServer(const std::function<void(ServerConfig&)>& tweak) {
    ServerConfig c = test_config();
    c.web_port = 0;
    tweak(c);
    spdlog::set_level(spdlog::level::from_str(c.log_level));
    server = std::make_unique<Server>(c, engine);
    web = std::make_unique<web::WebMonitor>(*server);
    server->start();
    web->start();
  }
  ~WebServer() {
    server->stop();
    web->stop();
  }
  ToyEngine engine;
  std::unique_ptr<Server> server;
  std::unique_ptr<web::WebMonitor> web;
};

// A blocking socket whose reads give up after two seconds instead of hanging the test.
inline void with_read_timeout(boost::asio::ip::tcp::socket& s) {
  timeval tv{2, 0};
  ::setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

// One request from `source` (127.0.0.2 stands for another machine) with an optional cookie.
inline boost::beast::http::response<boost::beast::http::string_body> http_request(
    uint16_t port, boost::beast::http::verb verb, const std::string& target,
    const char* source = "127.0.0.1", const std::string& cookie = "") {
  namespace http = boost::beast::http;
  using tcp = boost::asio::ip::tcp;
  boost::asio::io_context io;
  tcp::socket s(io);
  s.open(tcp::v4());
  s.bind({boost::asio::ip::make_address(source), 0});
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  with_read_timeout(s);
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, "127.0.0.1");
  if (!cookie.empty()) req.set(http::field::cookie, cookie);
  req.keep_alive(false);
  http::write(s, req);
  boost::beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(s, buf, res);
  return res;
}

}  // namespace fieldbrain::server::testing
