#include "app/server/web/web_socket_session.h"

#include <spdlog/spdlog.h>

#include "app/server/protocol/printable.h"
#include "app/server/web/web_hub.h"

namespace fieldbrain::server::web {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace asio = boost::asio;

namespace {
constexpr int kMaxBadControlMessages = 10;
constexpr size_t kMaxControlMessageBytes = 4096;
}  // namespace

WebSocketSession::WebSocketSession(beast::tcp_stream stream, WebHub& hub, size_t queue_limit,
                                   size_t queue_bytes_limit)
    : ws_(std::move(stream)),
      hub_(hub),
      queue_limit_(queue_limit),
      queue_bytes_limit_(queue_bytes_limit),
      log_(hub.stats(), hub.config().log_lines_per_minute) {
  // A small kernel send buffer, so a browser that stops reading reaches the bounded queue
  // quickly instead of parking megabytes in the kernel (as the monitor port does).
  boost::system::error_code ec;
  beast::get_lowest_layer(ws_).socket().set_option(asio::socket_base::send_buffer_size(16 * 1024),
                                                   ec);
  ws_.read_message_max(kMaxControlMessageBytes);
  const auto peer = beast::get_lowest_layer(ws_).socket().remote_endpoint(ec);
  who_ = "web monitor client " + (ec ? std::string("?") : peer.address().to_string());
}

void WebSocketSession::start(beast::http::request<beast::http::string_body> request) {
  // The HTTP side's timeout no longer applies; the WebSocket's own (handshake, idle with
  // pings) takes over.
  beast::get_lowest_layer(ws_).expires_never();
  ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
  ws_.async_accept(request, [self = shared_from_this()](beast::error_code ec) {
    if (ec) return self->close("handshake failed: " + ec.message());
    self->open_ = true;
    self->hub_.join(self);
    self->read();
    self->write_next();
  });
}

void WebSocketSession::read() {
  ws_.async_read(in_, [self = shared_from_this()](beast::error_code ec, size_t) {
    if (ec) return self->close(ec.message());
    const std::string text = beast::buffers_to_string(self->in_.data());
    self->in_.consume(self->in_.size());
    self->on_control(text);
    if (!self->closed_) self->read();
  });
}

void WebSocketSession::on_control(const std::string& text) {
  try {
    selection_ = parse_selection(text);
    bad_messages_ = 0;
    hub_.selection_changed(*this);
  } catch (const std::exception& e) {
    if (log_.allow("web bad control message", who_)) {
      spdlog::warn("{}: bad control message: {}", who_, printable(e.what(), 200));
    }
    nlohmann::json error = {{"type", "error"}, {"message", e.what()}};
    send(std::make_shared<const std::string>(error.dump()));
    if (++bad_messages_ >= kMaxBadControlMessages) close("too many bad control messages");
  }
}

void WebSocketSession::send(Message message) {
  if (closed_) return;
  if (out_.size() >= queue_limit_ || out_bytes_ + message->size() > queue_bytes_limit_) {
    ++dropped_;
    hub_.count_drop();
    return;
  }
  out_bytes_ += message->size();
  out_.push_back(std::move(message));
  write_next();
}

void WebSocketSession::write_next() {
  if (writing_ || !open_ || closed_ || out_.empty()) return;
  writing_ = true;
  ws_.text(true);
  ws_.async_write(asio::buffer(*out_.front()),
                  [self = shared_from_this()](beast::error_code ec, size_t) {
                    self->writing_ = false;
                    if (self->closed_) return;  // close() already emptied the queue
                    if (ec) return self->close("send failed: " + ec.message());
                    self->out_bytes_ -= self->out_.front()->size();
                    self->out_.pop_front();
                    self->write_next();
                  });
}

void WebSocketSession::close(const std::string& why) {
  if (closed_) return;
  closed_ = true;
  spdlog::debug("{} closed ({})", who_, why);
  log_.closing(who_);
  out_.clear();
  out_bytes_ = 0;
  // Closing the socket cancels any pending read/write; their handlers see an error and stop.
  boost::system::error_code ec;
  beast::get_lowest_layer(ws_).socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  beast::get_lowest_layer(ws_).socket().close(ec);
  if (open_) hub_.leave(this);
}

}  // namespace fieldbrain::server::web
