// A blocking TCP client socket in which every operation has a deadline: each call runs the
// socket's private Asio io_context for at most `timeout_s` and cancels what has not finished,
// so a silent peer gives a LinkError instead of a hang. Used by the robot link and the
// monitor client.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

namespace fieldbrain::sim {

struct LinkError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class TimedSocket {
 public:
  // `who` prefixes every error message ("monitor", "" for the robot link).
  TimedSocket(std::string who, double timeout_s);
  ~TimedSocket();
  TimedSocket(const TimedSocket&) = delete;
  TimedSocket& operator=(const TimedSocket&) = delete;

  void connect(const std::string& host, int port);  // also sets TCP_NODELAY
  void write(const void* data, size_t n);
  void read_exact(void* data, size_t n);
  std::string read_line();  // through '\n', newline included
  bool is_open() const;
  void close();

 private:
  struct Io;
  std::unique_ptr<Io> io_;
  std::string who_;
  double timeout_s_;
};

}  // namespace fieldbrain::sim
