// The devices a test runs an operation on, in the style torchvision tests its ops: the same
// test body for every device, compared against the CPU. Shared by every suite with [cuda] tests.
//
// A [cuda] test calls cuda_or_skip() first and returns when it says false: without a GPU it
// reports the case skipped (test/support/skip.h: the marker CTest knows; on Catch2 v3 SKIP),
// so a run without a GPU shows each skipped test as Skipped instead of passing silently.
#pragma once

#include <string>
#include <vector>

#include "test/support/catch.h"
#include "test/support/skip.h"
#include <torch/torch.h>

namespace fieldbrain::test {

inline bool cuda_present() { return torch::cuda::is_available(); }

// true when a CUDA device is usable; otherwise reports `what` as skipped and returns false.
inline bool cuda_or_skip(const std::string& what) {
  if (cuda_present()) return true;
  announce_skip("[cuda] " + what +
                ": no CUDA device (torch::cuda::is_available() is false; build with "
                "scripts/build.sh --cuda and run on a GPU)");
  return false;
}

// Every device to run a device-parametrised test on: "cpu" always, then "cuda" when present.
inline std::vector<std::string> test_devices() {
  std::vector<std::string> devices{"cpu"};
  if (cuda_present()) devices.push_back("cuda");
  return devices;
}

// Bytes the CUDA caching allocator has reserved on the current device, or -1 in a build
// without CUDA (FIELDBRAIN_WITH_CUDA is defined by test/CMakeLists.txt when FIELDBRAIN_CUDA=ON).
int64_t cuda_reserved_bytes();

}  // namespace fieldbrain::test
