// Issue 36 item 2: a page from another origin must not open the web monitor's WebSocket (it
// would read every robot's telemetry). The server's own origin, the origins of
// web_allowed_origins and clients that send no Origin (not browsers) get in; others get 403.
#include "app/server/protocol/web_origin.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "test/server/captured_log.h"
#include "test/server/web_server.h"
#include "test/support/catch.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::testing;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

namespace {

// A WebSocket handshake with the given Host and (when set) Origin headers: the reply's status
// and, when it opened, the first message.
struct Handshake {
  http::status status = http::status::unknown;
  std::string first_message;
  std::string body;
};

// The upgrade request a browser sends, written by hand so the refusal's status and body can
// be read as they come.
Handshake open_with(uint16_t port, const std::string& host,
                    const std::optional<std::string>& origin) {
  boost::asio::io_context io;
  tcp::socket s(io);
  s.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  with_read_timeout(s);
  http::request<http::empty_body> req{http::verb::get, "/ws", 11};
  req.set(http::field::host, host);
  req.set(http::field::upgrade, "websocket");
  req.set(http::field::connection, "Upgrade");
  req.set(http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");
  req.set(http::field::sec_websocket_version, "13");
  if (origin) req.set(http::field::origin, *origin);
  http::write(s, req);
  beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(s, buf, res);
  Handshake out;
  out.status = res.result();
  out.body = res.body();
  if (out.status != http::status::switching_protocols) return out;
  // Accepted: the same headers again through Beast's client, which reads the first message.
  beast::websocket::stream<tcp::socket> ws(io);
  ws.next_layer().connect({boost::asio::ip::make_address("127.0.0.1"), port});
  with_read_timeout(ws.next_layer());
  ws.set_option(
      beast::websocket::stream_base::decorator([origin](beast::websocket::request_type& r) {
        if (origin) r.set(http::field::origin, *origin);
      }));
  beast::error_code ec;
  ws.handshake(host, "/ws", ec);
  beast::flat_buffer message;
  if (!ec) ws.read(message, ec);
  if (!ec) out.first_message = beast::buffers_to_string(message.data());
  return out;
}

}  // namespace

TEST_CASE("a WebSocket from another origin is refused with 403 and logged",
          "[server][web][origin]") {
  CapturedLog log;
  WebServer srv([](ServerConfig& c) { c.log_level = "info"; });
  const uint16_t port = srv.web->port();
  const std::string own = "127.0.0.1:" + std::to_string(port);

  const Handshake evil = open_with(port, own, std::string("http://evil.example"));
  CHECK(evil.status == http::status::forbidden);
  CHECK(evil.first_message.empty());
  CHECK(evil.body.find("web_allowed_origins") != std::string::npos);
  CHECK(log.count("origin 'http://evil.example' refused") == 1);

  SECTION("a sandboxed page or a file (Origin: null) is refused too") {
    CHECK(open_with(port, own, std::string("null")).status == http::status::forbidden);
  }
  SECTION("the page the monitor served itself gets the robots") {
    const Handshake page = open_with(port, own, "http://" + own);
    CHECK(page.status == http::status::switching_protocols);
    CHECK(nlohmann::json::parse(page.first_message)["type"] == "hello");
    CHECK(open_with(port, "localhost:" + std::to_string(port),
                    "http://localhost:" + std::to_string(port))
              .status == http::status::switching_protocols);
  }
  SECTION("the same host on another port is another origin") {
    CHECK(open_with(port, own, "http://127.0.0.1:" + std::to_string(port + 1)).status ==
          http::status::forbidden);
  }
  SECTION("a name that merely resolves here (DNS rebinding) is not the server's own") {
    const std::string rebound = "evil.example:" + std::to_string(port);
    CHECK(open_with(port, rebound, "http://" + rebound).status == http::status::forbidden);
  }
  SECTION("a client without an Origin header is not a browser and gets in") {
    CHECK(open_with(port, own, std::nullopt).status == http::status::switching_protocols);
  }
}

TEST_CASE("origins listed in web_allowed_origins may open the WebSocket", "[server][web][origin]") {
  WebServer srv([](ServerConfig& c) {
    c.web_allowed_origins = "https://robots.lab.example, http://10.1.2.3:8080";
  });
  const uint16_t port = srv.web->port();
  const std::string own = "127.0.0.1:" + std::to_string(port);
  CHECK(open_with(port, own, std::string("https://robots.lab.example")).status ==
        http::status::switching_protocols);
  CHECK(open_with(port, own, std::string("HTTPS://Robots.Lab.Example:443")).status ==
        http::status::switching_protocols);
  CHECK(open_with(port, own, std::string("http://10.1.2.3:8080")).status ==
        http::status::switching_protocols);
  CHECK(open_with(port, own, std::string("http://robots.lab.example")).status ==
        http::status::forbidden);
  CHECK(open_with(port, own, std::string("https://robots.lab.example.evil.example")).status ==
        http::status::forbidden);
}

TEST_CASE("a bad web_allowed_origins entry stops the server at start-up naming the key",
          "[server][web][origin][config]") {
  for (const char* bad : {"robots.lab.example", "ftp://x.example", "http://x.example/page",
                          "http://x.example:0", "http://x.example:99999", "http://user@x"}) {
    INFO(bad);
    ServerConfig c = test_config();
    c.web_allowed_origins = std::string("http://ok.example,") + bad;
    CHECK_THROWS_WITH(c.validate(), Catch::Contains("web_allowed_origins"));
    CHECK_THROWS_WITH(c.validate(), Catch::Contains(bad));
  }
  CHECK(parse_allowed_origins("").empty());
  CHECK(parse_allowed_origins(" http://a.example , https://[::1]:8443 ").size() == 2);
  ServerConfig c = test_config();
  CHECK_THROWS_WITH(from_json(nlohmann::json{{"web_allowed_origins", 3}}, c),
                    Catch::Contains("web_allowed_origins"));
}
