#include "app/server/web/web_http_session.h"

#include <boost/beast/websocket.hpp>
#include <spdlog/spdlog.h>

#include "app/server/web/web_assets.h"
#include "app/server/web/web_hub.h"
#include "app/server/web/web_socket_session.h"

namespace fieldbrain::server::web {

namespace beast = boost::beast;
namespace http = beast::http;

namespace {
constexpr auto kHttpTimeout = std::chrono::seconds(30);
constexpr size_t kMaxRequestBody = 4096;
constexpr size_t kQueueBytesLimit = 4u << 20;  // per browser, beside the message count limit

http::response<http::string_body> plain(http::status status, unsigned version, bool keep_alive,
                                        const std::string& text) {
  http::response<http::string_body> res{status, version};
  res.set(http::field::server, "fieldbrain");
  res.set(http::field::content_type, "text/plain; charset=utf-8");
  res.keep_alive(keep_alive);
  res.body() = text + "\n";
  res.prepare_payload();
  return res;
}
}  // namespace

WebHttpSession::WebHttpSession(boost::asio::ip::tcp::socket socket, WebHub& hub,
                               size_t queue_limit)
    : stream_(std::move(socket)), hub_(hub), queue_limit_(queue_limit) {}

void WebHttpSession::read() {
  parser_ = std::make_unique<http::request_parser<http::string_body>>();
  parser_->body_limit(kMaxRequestBody);
  parser_->header_limit(8192);
  stream_.expires_after(kHttpTimeout);
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) {
                     if (ec == http::error::end_of_stream) {
                       beast::error_code ignored;
                       self->stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send,
                                                       ignored);
                       return;
                     }
                     if (ec) {
                       if (ec != beast::error::timeout) {
                         spdlog::debug("web monitor: bad HTTP request: {}", ec.message());
                       }
                       return;
                     }
                     self->on_request();
                   });
}

void WebHttpSession::on_request() {
  auto request = parser_->release();
  const std::string target(request.target());
  if (beast::websocket::is_upgrade(request)) {
    if (target != "/ws") {
      return respond(plain(http::status::not_found, request.version(), false,
                           "the WebSocket is at /ws"));
    }
    if (hub_.full()) {
      spdlog::warn("web monitor: browser refused, too many connected");
      return respond(plain(http::status::service_unavailable, request.version(), false,
                           "too many web monitor clients"));
    }
    auto ws = std::make_shared<WebSocketSession>(std::move(stream_), hub_, queue_limit_,
                                                 kQueueBytesLimit);
    return ws->start(std::move(request));
  }
  const bool keep_alive = request.keep_alive();
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    return respond(plain(http::status::method_not_allowed, request.version(), keep_alive,
                         "only GET and HEAD"));
  }
  const WebAsset* asset = find_web_asset(target);
  if (!asset) {
    return respond(plain(http::status::not_found, request.version(), keep_alive,
                         "not found: " + target.substr(0, 200)));
  }
  http::response<http::string_body> res{http::status::ok, request.version()};
  res.set(http::field::server, "fieldbrain");
  res.set(http::field::content_type, asset->content_type);
  res.set(http::field::cache_control, "no-cache");
  res.keep_alive(keep_alive);
  if (request.method() == http::verb::get) {
    res.body().assign(reinterpret_cast<const char*>(asset->data), asset->size);
  }
  res.prepare_payload();
  if (request.method() == http::verb::head) res.content_length(asset->size);
  respond(std::move(res));
}

void WebHttpSession::respond(http::response<http::string_body> response) {
  auto res = std::make_shared<http::response<http::string_body>>(std::move(response));
  stream_.expires_after(kHttpTimeout);
  http::async_write(stream_, *res,
                    [self = shared_from_this(), res](beast::error_code ec, size_t) {
                      if (ec) return;
                      if (!res->keep_alive()) {
                        beast::error_code ignored;
                        self->stream_.socket().shutdown(
                            boost::asio::ip::tcp::socket::shutdown_send, ignored);
                        return;
                      }
                      self->read();
                    });
}

}  // namespace fieldbrain::server::web
