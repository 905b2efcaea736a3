// Every device->host copy the brain makes goes through SyncCounter::to_host, so a test can
// assert "one synchronisation per cycle" (the motor copy) and nothing hidden creeps in.
#pragma once

#include <cstdint>

#include <torch/torch.h>

namespace fieldbrain {

class SyncCounter {
 public:
  // Copies t to a fresh CPU tensor (always a new tensor, never an alias of brain state) and
  // counts one device->host synchronisation on the calling thread.
  static torch::Tensor to_host(const torch::Tensor& t);
  // Copies t into `host`, a CPU tensor of t's shape the caller owns (no tensor is created),
  // and counts one device->host synchronisation.
  static void copy_to_host(const torch::Tensor& t, torch::Tensor& host);
  // Copies made so far by the calling thread (per thread, so brains stepped on other threads
  // do not disturb a test).
  static int64_t count();
  static void reset();
};

}  // namespace fieldbrain
