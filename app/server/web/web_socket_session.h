// One browser on the web monitor's WebSocket. Everything runs on the web I/O thread.
//
// Outgoing messages wait in a bounded queue (count and bytes): a browser that reads slowly,
// or not at all, loses updates (counted) and never holds up anything else. Incoming control
// messages (the selection) are small; bad ones get an error message back, and a client that
// keeps sending them is closed. What a browser makes the server log passes the per-connection
// and server-wide log budgets (connection_log.h), like a robot's.
#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "app/server/stats/connection_log.h"
#include "app/server/web/web_messages.h"

namespace fieldbrain::server::web {

class WebHub;

class WebSocketSession : public std::enable_shared_from_this<WebSocketSession> {
 public:
  using Message = std::shared_ptr<const std::string>;

  WebSocketSession(boost::beast::tcp_stream stream, WebHub& hub, size_t queue_limit,
                   size_t queue_bytes_limit);

  // Completes the WebSocket handshake for an upgrade request already read.
  void start(boost::beast::http::request<boost::beast::http::string_body> request);
  // Queues a message, or drops it (counted) when the queue is full.
  void send(Message message);
  void close(const std::string& why);

  const Selection& selection() const { return selection_; }
  uint64_t dropped() const { return dropped_; }

 private:
  void read();
  void on_control(const std::string& text);
  void write_next();

  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  WebHub& hub_;
  size_t queue_limit_, queue_bytes_limit_;
  boost::beast::flat_buffer in_;
  std::deque<Message> out_;
  size_t out_bytes_ = 0;
  bool writing_ = false;
  bool open_ = false, closed_ = false;
  int bad_messages_ = 0;
  uint64_t dropped_ = 0;
  Selection selection_;
  std::string who_;  // "web monitor client <address>", for the log
  ConnectionLog log_;
};

}  // namespace fieldbrain::server::web
