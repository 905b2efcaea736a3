// libFuzzer harness: the web monitor's HTTP/WebSocket request path. The bytes are what a
// browser (or anyone) sends to web_port: Beast's request parser reads them with the limits
// web_http_session.cpp sets (8 KiB of headers, 4 KiB of body), possibly several requests on
// one keep-alive connection; each request that parses goes through the decisions the session
// makes on it: the path without its query (web_request.h), the monitor_token from the query
// or the cookie, and whether it asks for the WebSocket upgrade at /ws. Every answer must be
// bounded and consistent (a path is a prefix of its target; a token source only when that
// place really holds the token).
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "app/server/web/web_request.h"

using namespace fieldbrain::server::web;
namespace http = boost::beast::http;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

const std::string kToken = "fuzz-token-0123";

void decide(const http::request<http::string_body>& request) {
  const std::string_view target(request.target().data(), request.target().size());
  const std::string_view path = request_path(target);
  check(path.size() <= target.size());
  check(target.substr(0, path.size()) == path);
  check(path.find('?') == std::string_view::npos);
  const auto cookie = request.find(http::field::cookie);
  const std::string_view cookie_text =
      cookie == request.end() ? std::string_view()
                              : std::string_view(cookie->value().data(), cookie->value().size());
  const TokenSource source = token_source(target, cookie_text, kToken);
  if (source == TokenSource::kQuery) {
    check(target.find(kToken) != std::string_view::npos);
  } else if (source == TokenSource::kCookie) {
    check(cookie_text.find(kToken) != std::string_view::npos);
  }
  const bool upgrade = boost::beast::websocket::is_upgrade(request);
  if (upgrade) check(request.method() == http::verb::get);
  // What the session answers the WebSocket at: "/ws" with or without a query.
  const bool ws_route = upgrade && path == "/ws";
  check(!ws_route || target.rfind("/ws", 0) == 0);
  check(request.body().size() <= 4096);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The query/cookie scanner on raw text too (its own input, any bytes).
  const std::string v = field_value(text, "token", '&');
  check(v.size() <= text.size());
  check(field_value(text, kTokenCookie, ';').size() <= text.size());

  // One keep-alive connection: requests back to back until the bytes run out or one is bad.
  boost::asio::const_buffer rest(data, size);
  for (int n = 0; n < 16 && rest.size() > 0; ++n) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(4096);
    parser.header_limit(8192);
    parser.eager(true);
    boost::beast::error_code ec;
    while (!parser.is_done()) {
      const size_t before = rest.size();
      const size_t used = parser.put(rest, ec);
      check(used <= before);
      rest += used;
      if (ec == http::error::need_more && rest.size() == 0) {
        ec = {};
        parser.put_eof(ec);  // the connection closes here
        break;
      }
      if (ec == http::error::need_more && used > 0) {
        ec = {};
        continue;
      }
      if (ec || used == 0) break;
    }
    if (ec || !parser.is_done()) break;
    decide(parser.get());
  }
  return 0;
}
