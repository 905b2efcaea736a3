// Launcher of the CUDA spontaneous wave (cuda/spontaneous_wave_kernel.cu). Plain C++ on purpose:
// no LibTorch or CUDA headers, so the .cu compiles with nvcc alone and the torch-facing
// registration (cuda/spontaneous_wave_cuda.cpp, FIELDBRAIN_CUDA=ON) only needs this declaration.
#pragma once

#include <cstdint>

namespace fieldbrain {
namespace ops {
namespace cuda {

// wave_vectors [B,5,3], wave_mask [B,5] contiguous, phase [B] with stride phase_stride (in
// floats), wave [B,R,R,R] contiguous: float32 device arrays (brain/ops/spontaneous_wave.h).
// Enqueues the kernel on `stream` (a cudaStream_t; nullptr = the default stream) and returns 0
// or the cudaError_t of the launch. No host sync, no workspace.
int launch_spontaneous_wave(const float* wave_vectors, const float* wave_mask, const float* phase,
                            int64_t phase_stride, float* wave, int64_t batch, int64_t resolution,
                            void* stream);

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
