#include "app/server/protocol/robot_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace fieldbrain::server {

RobotClient::RobotClient(uint16_t port, double timeout_s, int rcvbuf,
                         const std::string& source_address) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) throw std::runtime_error("socket() failed");
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout_s);
  tv.tv_usec = static_cast<suseconds_t>((timeout_s - tv.tv_sec) * 1e6);
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (rcvbuf > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (!source_address.empty()) {
    sockaddr_in local{};
    local.sin_family = AF_INET;
    if (::inet_pton(AF_INET, source_address.c_str(), &local.sin_addr) != 1 ||
        ::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
      ::close(fd_);
      fd_ = -1;
      throw std::runtime_error("cannot bind the client to " + source_address);
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error("connect to 127.0.0.1:" + std::to_string(port) + " failed");
  }
}

RobotClient::~RobotClient() { close(); }

void RobotClient::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void RobotClient::send_bytes(const std::vector<uint8_t>& bytes) {
  size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server closed; the following read reports it
    at += static_cast<size_t>(n);
  }
}

void RobotClient::send_text(const std::string& text) {
  send_bytes(std::vector<uint8_t>(text.begin(), text.end()));
}

std::optional<std::vector<uint8_t>> RobotClient::read_exact(size_t n) {
  std::vector<uint8_t> out(n);
  size_t at = 0;
  while (at < n && !pending_.empty()) {
    out[at++] = static_cast<uint8_t>(pending_.front());
    pending_.erase(0, 1);
  }
  while (at < n) {
    const ssize_t got = ::recv(fd_, out.data() + at, n - at, 0);
    if (got <= 0) return std::nullopt;
    at += static_cast<size_t>(got);
  }
  return out;
}

std::optional<Frame> RobotClient::read_frame(Framing framing) {
  auto header = read_exact(header_size(framing));
  if (!header) return std::nullopt;
  const uint8_t* h = header->data();
  auto be32 = [](const uint8_t* p) {
    return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
  };
  Frame f;
  size_t at = 0;
  if (framing != Framing::A) {
    f.magic = be32(h);
    at = 4;
  }
  f.length = be32(h + at);
  f.type = h[at + 4];
  f.count = be32(h + at + 5);
  if (f.count > (1u << 20)) return std::nullopt;
  auto body = read_exact(4 * size_t{f.count});
  if (!body) return std::nullopt;
  f.values = decode_floats(body->data(), f.count);
  f.bytes = *header;
  f.bytes.insert(f.bytes.end(), body->begin(), body->end());
  return f;
}

std::optional<std::string> RobotClient::read_line() {
  for (;;) {
    const auto nl = pending_.find('\n');
    if (nl != std::string::npos) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return line;
    }
    char buf[4096];
    const ssize_t got = ::recv(fd_, buf, sizeof buf, 0);
    if (got <= 0) return std::nullopt;
    pending_.append(buf, static_cast<size_t>(got));
  }
}

bool RobotClient::wait_closed(double timeout_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char buf[4096];
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t got = ::recv(fd_, buf, sizeof buf, 0);
    if (got == 0) return true;
    if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return true;
  }
  return false;
}

std::optional<Frame> RobotClient::handshake(Framing f, const std::vector<float>& caps) {
  send_bytes(encode_frame(f, MessageType::Handshake, caps));
  return read_frame(f);
}

std::optional<Frame> RobotClient::exchange(Framing f, const std::vector<float>& sensors) {
  send_bytes(encode_frame(f, MessageType::SensoryInput, sensors));
  return read_frame(f);
}

std::string hex(const std::vector<uint8_t>& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (uint8_t b : bytes) {
    s.push_back(digits[b >> 4]);
    s.push_back(digits[b & 15]);
  }
  return s;
}

std::vector<uint8_t> from_hex(const std::string& hex_text) {
  std::vector<uint8_t> out;
  int hi = -1;
  for (char c : hex_text) {
    int v;
    if (c >= '0' && c <= '9')
      v = c - '0';
    else if (c >= 'a' && c <= 'f')
      v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      v = c - 'A' + 10;
    else
      continue;  // spaces and separators
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(static_cast<uint8_t>(hi * 16 + v));
      hi = -1;
    }
  }
  return out;
}

}  // namespace fieldbrain::server
