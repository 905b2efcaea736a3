// Launcher of the CUDA read-out (cuda/field_readout_kernel.cu). Plain C++ on purpose: no
// LibTorch or CUDA headers, so the .cu compiles with nvcc alone and the torch-facing
// registration (cuda/field_readout_cuda.cpp, FIELDBRAIN_CUDA=ON) only needs this declaration.
#pragma once

#include <cstdint>

namespace fieldbrain {
namespace ops {
namespace cuda {

// field [B,64,R,R,R] and out [B, kReadoutWidth] (brain/ops/field_readout_layout.h), contiguous
// float32 device arrays. Enqueues the read-out on `stream` (a cudaStream_t; nullptr = the default
// stream) and returns 0 or the cudaError_t of the first failing launch. Makes no host sync and
// needs no workspace.
int launch_field_readout(const float* field, float* out, int64_t batch, int64_t resolution,
                         void* stream);

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
