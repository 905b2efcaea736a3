// The tail every CUDA registration (cuda/*_cuda.cpp) shares: call a raw launcher of a
// cuda/*_kernel.cu on the current stream and turn its returned cudaError_t into a c10 error that
// names the op. The launchers stay plain C++ (int result, `void* stream` last) so that the .cu
// files compile without LibTorch; this header is the one place that knows how to call them.
#pragma once

#include <ATen/cuda/CUDAContext.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>

#include <utility>

namespace fieldbrain {
namespace ops {
namespace cuda {

// launch(args..., current stream); throws "<op> (CUDA): launch failed: <cuda error>" when it
// returns non-zero. No host sync: a launch error is what the enqueue itself reports.
template <typename Launcher, typename... Args>
void launch_or_throw(const char* op, Launcher&& launch, Args&&... args) {
  const int err = std::forward<Launcher>(launch)(std::forward<Args>(args)...,
                                                 at::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(err == 0, op, " (CUDA): launch failed: ",
              cudaGetErrorString(static_cast<cudaError_t>(err)));
}

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
