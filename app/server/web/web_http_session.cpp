#include "app/server/web/web_http_session.h"

#include <spdlog/spdlog.h>

#include <boost/beast/websocket.hpp>
#include <string_view>

#include "app/server/protocol/printable.h"
#include "app/server/session/access_token.h"
#include "app/server/stats/server_stats.h"
#include "app/server/web/web_assets.h"
#include "app/server/web/metrics_page.h"
#include "app/server/web/web_hub.h"
#include "app/server/web/web_request.h"
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

std::string_view header_value(const http::request<http::string_body>& request, http::field name) {
  const auto it = request.find(name);
  if (it == request.end()) return {};
  return std::string_view(it->value().data(), it->value().size());
}

}  // namespace

WebHttpSession::WebHttpSession(boost::asio::ip::tcp::socket socket, WebHub& hub,
                               WebHttpOptions options)
    : stream_(std::move(socket)),
      hub_(hub),
      queue_limit_(options.queue_limit),
      token_(std::move(options.token)),
      header_timeout_(options.header_timeout),
      stats_(options.stats),
      ticket_(std::move(options.ticket)),
      origins_(std::move(options.origins)) {
  boost::system::error_code ec;
  const auto ep = stream_.socket().remote_endpoint(ec);
  local_ = !ec && is_local_peer(ep.address().to_string());
}

bool WebHttpSession::allowed(const http::request<http::string_body>& request) {
  if (token_.empty() || local_) return true;
  const auto cookie = request.find(http::field::cookie);
  const TokenSource source = token_source(
      std::string_view(request.target().data(), request.target().size()),
      cookie == request.end()
          ? std::string_view()
          : std::string_view(cookie->value().data(), cookie->value().size()),
      token_);
  if (source == TokenSource::kQuery) set_cookie_ = true;
  return source != TokenSource::kNone;
}

void WebHttpSession::read() {
  parser_ = std::make_unique<http::request_parser<http::string_body>>();
  parser_->body_limit(kMaxRequestBody);
  parser_->header_limit(8192);
  // An idle connection (no request, or headers sent a byte at a time) is not worth a
  // descriptor for long: the whole request within header_timeout (5 s by default).
  stream_.expires_after(header_timeout_);
  http::async_read(
      stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec == http::error::end_of_stream) {
          beast::error_code ignored;
          self->stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
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
  if (!allowed(request)) {
    if (!stats_ || stats_->may_log("web request without a token")) {
      spdlog::warn("web monitor: request without a valid token refused");
    }
    return respond(plain(http::status::unauthorized, request.version(), false,
                         "the monitor_token is required: open /?token=<monitor_token>"));
  }
  if (beast::websocket::is_upgrade(request)) {
    // The token may ride in the query ("/ws?token=..."): the route is the path.
    if (request_path(target) != "/ws") {
      return respond(
          plain(http::status::not_found, request.version(), false, "the WebSocket is at /ws"));
    }
    // A WebSocket ignores the same-origin policy: a page from elsewhere must not read the
    // robots (web_origin.h). Checked before the cap, so such pages never take a place.
    const bool has_origin = request.find(http::field::origin) != request.end();
    const std::string_view origin = header_value(request, http::field::origin);
    if (origins_ &&
        !web_origin_allowed(has_origin, origin, header_value(request, http::field::host),
                            origins_->allowed, origins_->machine_name)) {
      if (!stats_ || stats_->may_log("web WebSocket from another origin")) {
        spdlog::warn(
            "web monitor: WebSocket from origin '{}' refused (not this server's own, "
            "nor in web_allowed_origins)",
            printable(origin, 200));
      }
      return respond(plain(http::status::forbidden, request.version(), false,
                           "this page's origin may not open the monitor's WebSocket: add it "
                           "to web_allowed_origins"));
    }
    if (hub_.full()) {
      if (!stats_ || stats_->may_log("web browser over max_monitor_clients")) {
        spdlog::warn("web monitor: browser refused, too many connected");
      }
      return respond(plain(http::status::service_unavailable, request.version(), false,
                           "too many web monitor clients"));
    }
    auto ws = std::make_shared<WebSocketSession>(std::move(stream_), hub_, queue_limit_,
                                                 kQueueBytesLimit);
    ticket_.reset();  // a WebSocket counts under max_monitor_clients (the hub), not here
    return ws->start(std::move(request));
  }
  const bool keep_alive = request.keep_alive();
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    return respond(plain(http::status::method_not_allowed, request.version(), keep_alive,
                         "only GET and HEAD"));
  }
  if (is_operator_page(target)) {  // /metrics, /healthz (metrics_page.h)
    const unsigned version = request.version();
    return render_operator_page(
        target, hub_, [self = shared_from_this(), version, keep_alive](OperatorPage page) {
          http::response<http::string_body> res{static_cast<http::status>(page.status), version};
          res.set(http::field::server, "fieldbrain");
          res.set(http::field::content_type, page.content_type);
          res.set(http::field::cache_control, "no-cache");
          res.keep_alive(keep_alive);
          res.body() = std::move(page.body);
          res.prepare_payload();
          self->respond(std::move(res));
        });
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
  if (set_cookie_) {
    res.set(http::field::set_cookie,
            std::string(kTokenCookie) + "=" + token_ + "; Path=/; HttpOnly; SameSite=Strict");
  }
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
  http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, size_t) {
    if (ec) return;
    if (!res->keep_alive()) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
      return;
    }
    self->read();
  });
}

}  // namespace fieldbrain::server::web
