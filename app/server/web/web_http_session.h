// One HTTP connection to the web monitor: serves the embedded page and its files (GET/HEAD),
// and hands `/ws` upgrade requests to a WebSocketSession. Small requests only, with a timeout.
#pragma once

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <memory>

namespace fieldbrain::server::web {

class WebHub;

class WebHttpSession : public std::enable_shared_from_this<WebHttpSession> {
 public:
  WebHttpSession(boost::asio::ip::tcp::socket socket, WebHub& hub, size_t queue_limit);
  void start() { read(); }

 private:
  void read();
  void on_request();
  void respond(boost::beast::http::response<boost::beast::http::string_body> response);

  boost::beast::tcp_stream stream_;
  WebHub& hub_;
  size_t queue_limit_;
  boost::beast::flat_buffer buffer_;
  std::unique_ptr<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
};

}  // namespace fieldbrain::server::web
