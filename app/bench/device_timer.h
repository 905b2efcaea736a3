// Times one iteration of work on the device it runs on. On the CPU: the steady clock around
// the call. On CUDA: events recorded on the current stream before and after, so the time is
// the GPU's own (kernel launches are asynchronous: a host clock would measure the launch).
#pragma once

#include <memory>

#include <torch/torch.h>

namespace fieldbrain {
namespace bench {

class DeviceTimer {
 public:
  // Throws std::runtime_error for a CUDA device in a build without FIELDBRAIN_CUDA.
  explicit DeviceTimer(const torch::Device& device);
  ~DeviceTimer();
  void start();
  double stop_ms();  // waits for the device, returns the time since start()

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "cpu" or "cuda"; throws std::invalid_argument naming the device when it is not usable here.
torch::Device bench_device(const std::string& name);

}  // namespace bench
}  // namespace fieldbrain
