// CUDA registration of every fused operator with a per-device kernel (brain/ops/op_list.h),
// built with FIELDBRAIN_CUDA=ON against a CUDA LibTorch. Each op's wrapper (op_registration.h)
// guards the device of its first argument, checks the arguments with the op's prepare and calls
// its launcher (cuda/launchers.h) on the current stream, with no host sync; a launch error
// becomes "<op> (CUDA): launch failed: <cuda error>".
#include <ATen/ops/empty.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/Exception.h>
#include <cuda_runtime_api.h>
#include <torch/library.h>

#include <map>
#include <mutex>
#include <tuple>

#include "brain/ops/cuda/launchers.h"
#include "brain/ops/op_list.h"

namespace fieldbrain {
namespace ops {
namespace cuda {

namespace {

// What a launch needs beyond its op's arguments: the field step's workspace, per (device, B, R),
// allocated on first use and reused (no allocation in steady state). Launches on one device are
// stream-ordered, so one workspace per shape suffices as long as callers use one stream per
// device (the brain does).
template <class Args>
const Args& with_workspace(const Args& args) {
  return args;
}
FieldStepArrays with_workspace(const FieldStepArrays& args) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int64_t, int64_t>, at::Tensor> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const c10::DeviceIndex device = c10::cuda::current_device();  // the guard's: the field's
  auto& ws = cache[{static_cast<int>(device), args.batch, args.resolution}];
  if (!ws.defined()) {
    ws = at::empty({static_cast<int64_t>(field_step_workspace_floats(args.batch, args.resolution))},
                   at::TensorOptions().dtype(at::kFloat).device(c10::Device(at::kCUDA, device)));
  }
  FieldStepArrays with = args;
  with.workspace = ws.data_ptr<float>();
  return with;
}

}  // namespace

struct CudaDevice {
  static constexpr c10::DeviceType kType = c10::DeviceType::CUDA;
  // The first argument's device (the checks then require every argument on it).
  static c10::cuda::OptionalCUDAGuard guard(const at::Tensor& first) {
    return c10::cuda::OptionalCUDAGuard(first.defined() && first.is_cuda()
                                            ? c10::optional<c10::Device>(first.device())
                                            : c10::nullopt);
  }
  template <class Args>
  static void launch(const char* name, const Args& args) {
    const int err = cuda::launch(with_workspace(args), at::cuda::getCurrentCUDAStream().stream());
    TORCH_CHECK(err == 0, "fieldbrain::", name, " (CUDA): launch failed: ",
                cudaGetErrorString(static_cast<cudaError_t>(err)));
  }
};

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CUDA, m) {
  fieldbrain::ops::register_kernels<fieldbrain::ops::cuda::CudaDevice>(
      m, fieldbrain::ops::KernelOps{});
}
