// A full disk, as the recorder sees it: RLIMIT_FSIZE makes every write past `bytes` of a file
// fail (EFBIG, SIGXFSZ ignored) for the process, until this goes out of scope.
#pragma once

#include <signal.h>
#include <sys/resource.h>

#include <csignal>

namespace fieldbrain::server::testing {

class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) : previous_signal_(std::signal(SIGXFSZ, SIG_IGN)) {
    ::getrlimit(RLIMIT_FSIZE, &previous_);
    rlimit small = previous_;
    small.rlim_cur = bytes;
    applied_ = ::setrlimit(RLIMIT_FSIZE, &small) == 0;
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &previous_);
    std::signal(SIGXFSZ, previous_signal_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;
  bool applied() const { return applied_; }

 private:
  rlimit previous_{};
  void (*previous_signal_)(int);
  bool applied_ = false;
};

}  // namespace fieldbrain::server::testing
