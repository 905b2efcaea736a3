// Launcher of the CUDA fill of fieldbrain::philox_normal_out (cuda/philox_normal_kernel.cu).
// Plain C++, no LibTorch or CUDA headers (see field_step_cuda.h).
#pragma once

#include <cstdint>

namespace fieldbrain {
namespace ops {
namespace cuda {

// out[b * per_robot + i] = philox::normal(key[2b], key[2b+1], stream, i) for b < batch,
// i < per_robot; key and out in device memory. Enqueued on `stream_ptr` (a cudaStream_t);
// returns 0 or the cudaError_t of the launch. No host sync.
int launch_philox_normal(const int64_t* key, uint32_t stream, int64_t batch, int64_t per_robot,
                         float* out, void* stream_ptr);

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
