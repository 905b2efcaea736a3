#include "test/server/loopback_peer.h"

#include "test/support/free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fieldbrain::server::testing {

LoopbackPeer::LoopbackPeer(const char* source, uint16_t port, int sndbuf) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) throw std::runtime_error("socket() failed");
  if (sndbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &from.sin_addr);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
    const int err = errno;
    ::close(fd_);
    throw std::runtime_error(std::string("cannot bind ") + source + ": " + std::strerror(err));
  }
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    // The reason (refused: nothing listens; timed out: a full backlog) tells a dead server
    // from a slow one when a test fails under load.
    const int err = errno;
    ::close(fd_);
    throw std::runtime_error(std::string("connect from ") + source + " to port " +
                             std::to_string(port) + " failed: " + std::strerror(err));
  }
}

LoopbackPeer::~LoopbackPeer() {
  if (fd_ >= 0) ::close(fd_);
}

void LoopbackPeer::send_all(const std::string& text) { flood(text, text.size(), 5.0); }

size_t LoopbackPeer::flood(const std::string& text, size_t total, double stall_s) {
  size_t sent = 0, at = 0;
  while (sent < total) {
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, static_cast<int>(stall_s * 1000)) <= 0) break;  // no progress: stop
    if (p.revents & (POLLERR | POLLHUP)) break;
    const size_t n = std::min(text.size() - at, total - sent);
    const ssize_t k = ::send(fd_, text.data() + at, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) continue;
      break;  // closed by the server
    }
    sent += static_cast<size_t>(k);
    at = (at + static_cast<size_t>(k)) % text.size();
  }
  return sent;
}

bool LoopbackPeer::closed_within(double timeout_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          end - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return true;
    received_ += static_cast<size_t>(n);
  }
}

uint16_t free_loopback_port() { return fieldbrain::test::free_port(); }

size_t resident_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long size = 0, resident = 0;
  const int got = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return got == 2 ? resident * static_cast<size_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

}  // namespace fieldbrain::server::testing
