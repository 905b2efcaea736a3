// libFuzzer harness: the web monitor's HTTP/WebSocket request path. The bytes are what a
// browser (or anyone) sends to web_port: Beast's request parser reads them with the limits
// web_http_session.cpp sets (8 KiB of headers, 4 KiB of body), possibly several requests on
// one keep-alive connection; each request that parses goes through the decisions the session
// makes on it: the path without its query (web_request.h), the monitor_token from the query
// or the cookie, and whether it asks for the WebSocket upgrade at /ws. Every answer must be
// bounded and consistent (a path is a prefix of its target; a token source only when that
// place really holds the token).
// Boost's assertions go to the handler below (before any Boost header).
#define BOOST_ENABLE_ASSERT_HANDLER 1

#include <algorithm>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "app/server/web/web_request.h"

// Every Boost assertion is a finding, except one known to be wrong: Beast 1.74's
// parse_chunk_header asserts n >= 5 where 3 or 4 bytes are legal (a final chunk "0\r\n"
// whose trailer arrives in small reads); the code after it handles them, returning
// need_more (boostorg/beast pull request 2861, Boost 1.86). The server's Release build
// compiles the assertion out; the seed chunked_trailer_byte_at_a_time reaches it.
namespace boost {
void assertion_failed(char const* expr, char const* function, char const* file, long line) {
  if (std::strcmp(expr, "n >= 5") == 0 && std::strstr(function, "parse_chunk_header")) return;
  std::fprintf(stderr, "Boost assertion failed: %s in %s (%s:%ld)\n", expr, function, file, line);
  std::abort();
}
void assertion_failed_msg(char const* expr, char const* msg, char const* function, char const* file,
                          long line) {
  std::fprintf(stderr, "Boost assertion failed: %s (%s) in %s (%s:%ld)\n", expr, msg, function,
               file, line);
  std::abort();
}
}  // namespace boost

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
  if (size == 0) return 0;

  // One keep-alive connection, read the way http::async_read does: the first byte sets how
  // many bytes each socket read brings (1..64); the parser always gets every byte it has not
  // consumed, plus a new read after it asked for more; the end of the input is the peer
  // closing. Requests back to back until the bytes run out or one is bad.
  const size_t step = 1 + data[0] % 64;
  const char* bytes = reinterpret_cast<const char*>(data) + 1;
  const size_t total = size - 1;
  size_t pos = 0;                      // consumed by the parsers so far
  size_t end = std::min(total, step);  // received so far
  for (int n = 0; n < 16 && pos < total; ++n) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(4096);
    parser.header_limit(8192);
    parser.eager(true);
    boost::beast::error_code ec;
    while (!parser.is_done()) {
      if (pos == end) {
        if (end == total) break;
        end = std::min(total, end + step);
      }
      const size_t used = parser.put(boost::asio::const_buffer(bytes + pos, end - pos), ec);
      check(used <= end - pos);
      pos += used;
      if (ec == http::error::need_more) {
        ec = {};
        if (end == total) {
          parser.put_eof(ec);  // the peer closed: the request may end here, or is incomplete
          break;
        }
        end = std::min(total, end + step);  // the next socket read
        continue;
      }
      if (ec) break;
    }
    if (ec || !parser.is_done()) break;
    decide(parser.get());
  }
  return 0;
}
