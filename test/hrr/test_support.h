// Small helpers of the [hrr] suite: scratch files and running child processes.
#pragma once

#include <string>

namespace fieldbrain::hrr::test {

// A fresh directory under $TMPDIR (or /tmp), removed with its files on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved
};

// Runs `command` through /bin/sh and captures its output.
CommandResult run_command(const std::string& command);

// The Python interpreter with torch and the scripts/hrr/ folder.
std::string python();
std::string hrr_script(const std::string& name);

}  // namespace fieldbrain::hrr::test
