#include "app/sim/timed_socket.h"

#include <algorithm>
#include <boost/asio.hpp>
#include <chrono>

namespace fieldbrain::sim {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct TimedSocket::Io {
  asio::io_context ctx;
  tcp::socket socket{ctx};
  asio::streambuf lines;
};

TimedSocket::TimedSocket(std::string who, double timeout_s)
    : io_(new Io), who_(who.empty() ? "" : who + ": "), timeout_s_(timeout_s) {}

TimedSocket::~TimedSocket() { close(); }

namespace {

// Starts one asynchronous operation through `start(handler)`, runs the io_context until it
// completes or the deadline passes, and returns its error code. On timeout the operation is
// cancelled (and its handler run) before throwing.
template <typename Start>
boost::system::error_code run_with_deadline(asio::io_context& ctx, tcp::socket& socket,
                                            double timeout_s, const std::string& what,
                                            Start start) {
  bool done = false;
  boost::system::error_code result;
  start([&](const boost::system::error_code& ec) {
    result = ec;
    done = true;
  });
  ctx.restart();
  ctx.run_for(std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(timeout_s)));
  if (!done) {
    boost::system::error_code ignored;
    socket.cancel(ignored);
    ctx.restart();
    ctx.run();
    throw LinkError(what + ": timed out after " + std::to_string(timeout_s) + " s");
  }
  return result;
}

}  // namespace

void TimedSocket::connect(const std::string& host, int port) {
  const std::string where = host + ":" + std::to_string(port);
  tcp::resolver resolver(io_->ctx);
  boost::system::error_code rec;
  const auto endpoints = resolver.resolve(host, std::to_string(port), rec);
  if (rec) throw LinkError(who_ + "cannot resolve " + host + ": " + rec.message());
  const auto ec = run_with_deadline(
      io_->ctx, io_->socket, timeout_s_, who_ + "connecting to " + where, [&](auto done) {
        asio::async_connect(
            io_->socket, endpoints,
            [done](const boost::system::error_code& e, const tcp::endpoint&) { done(e); });
      });
  if (ec) throw LinkError(who_ + "cannot connect to " + where + ": " + ec.message());
  io_->socket.set_option(tcp::no_delay(true));
}

void TimedSocket::write(const void* data, size_t n) {
  const auto ec =
      run_with_deadline(io_->ctx, io_->socket, timeout_s_, who_ + "sending", [&](auto done) {
        asio::async_write(io_->socket, asio::buffer(data, n),
                          [done](const boost::system::error_code& e, size_t) { done(e); });
      });
  if (ec) throw LinkError(who_ + "send failed: " + ec.message());
}

void TimedSocket::read_exact(void* data, size_t n) {
  // Bytes already pulled in by read_line come first (a peer may mix lines and frames).
  const size_t buffered = std::min(n, io_->lines.size());
  if (buffered) {
    asio::buffer_copy(asio::buffer(data, buffered), io_->lines.data());
    io_->lines.consume(buffered);
  }
  if (buffered == n) return;
  auto* rest = static_cast<char*>(data) + buffered;
  const auto ec = run_with_deadline(
      io_->ctx, io_->socket, timeout_s_, who_ + "waiting for a reply", [&](auto done) {
        asio::async_read(io_->socket, asio::buffer(rest, n - buffered),
                         [done](const boost::system::error_code& e, size_t) { done(e); });
      });
  if (ec == asio::error::eof) throw LinkError(who_ + "the server closed the connection");
  if (ec) throw LinkError(who_ + "receive failed: " + ec.message());
}

std::string TimedSocket::read_line() {
  size_t n = 0;
  const auto ec = run_with_deadline(
      io_->ctx, io_->socket, timeout_s_, who_ + "waiting for a reply line", [&](auto done) {
        asio::async_read_until(io_->socket, io_->lines, '\n',
                               [&n, done](const boost::system::error_code& e, size_t bytes) {
                                 n = bytes;
                                 done(e);
                               });
      });
  if (ec == asio::error::eof) throw LinkError(who_ + "the server closed the connection");
  if (ec) throw LinkError(who_ + "receive failed: " + ec.message());
  std::string line(asio::buffers_begin(io_->lines.data()),
                   asio::buffers_begin(io_->lines.data()) + n);
  io_->lines.consume(n);
  return line;
}

bool TimedSocket::is_open() const { return io_->socket.is_open(); }

void TimedSocket::close() {
  if (!io_->socket.is_open()) return;
  boost::system::error_code ec;
  io_->socket.shutdown(tcp::socket::shutdown_both, ec);
  io_->socket.close(ec);
}

}  // namespace fieldbrain::sim
