#include "app/bench/device_timer.h"

#include <chrono>
#include <optional>
#include <stdexcept>

#ifdef FIELDBRAIN_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <cuda_runtime_api.h>
#endif

namespace fieldbrain {
namespace bench {

struct DeviceTimer::Impl {
  bool cuda = false;
  std::chrono::steady_clock::time_point t0;
#ifdef FIELDBRAIN_WITH_CUDA
  // cudaEventDefault keeps timing on (at::cuda::CUDAEvent's default turns it off).
  std::optional<at::cuda::CUDAEvent> begin, end;
#endif
};

DeviceTimer::DeviceTimer(const torch::Device& device) : impl_(std::make_unique<Impl>()) {
  impl_->cuda = device.is_cuda();
#ifndef FIELDBRAIN_WITH_CUDA
  if (impl_->cuda) {
    throw std::runtime_error("CUDA timing needs a build with FIELDBRAIN_CUDA=ON (scripts/build.sh --cuda)");
  }
#endif
}

DeviceTimer::~DeviceTimer() = default;

void DeviceTimer::start() {
#ifdef FIELDBRAIN_WITH_CUDA
  if (impl_->cuda) {
    if (!impl_->begin) {
      impl_->begin.emplace(cudaEventDefault);
      impl_->end.emplace(cudaEventDefault);
    }
    impl_->begin->record();
    return;
  }
#endif
  impl_->t0 = std::chrono::steady_clock::now();
}

double DeviceTimer::stop_ms() {
#ifdef FIELDBRAIN_WITH_CUDA
  if (impl_->cuda) {
    impl_->end->record();
    impl_->end->synchronize();
    return impl_->begin->elapsed_time(*impl_->end);
  }
#endif
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - impl_->t0)
      .count();
}

torch::Device bench_device(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  if (name == "cuda") {
    if (!torch::cuda::is_available()) {
      throw std::invalid_argument(
          "--device cuda: no CUDA device is available to this LibTorch (a CPU-only LibTorch, "
          "or no GPU); build with scripts/build.sh --cuda on a machine with a GPU");
    }
#ifndef FIELDBRAIN_WITH_CUDA
    throw std::invalid_argument("--device cuda: this build has no CUDA timing (FIELDBRAIN_CUDA=OFF); "
                                "build with scripts/build.sh --cuda");
#endif
    return torch::Device(torch::kCUDA, 0);
  }
  throw std::invalid_argument("--device " + name + ": expected cpu or cuda");
}

}  // namespace bench
}  // namespace fieldbrain
