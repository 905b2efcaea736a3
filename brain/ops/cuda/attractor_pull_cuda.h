// Launchers of the CUDA reward-attractor kernels (cuda/attractor_pull_kernel.cu). Plain C++ on
// purpose: no LibTorch or CUDA headers, so the .cu compiles with nvcc alone and the
// torch-facing registration (cuda/attractor_pull_cuda.cpp, FIELDBRAIN_CUDA=ON) only needs these.
#pragma once

#include <cstdint>

namespace fieldbrain {
namespace ops {
namespace cuda {

// bank[b, slot[b * slot_stride]] = field[b] for every robot whose slot is >= 0 (and < slots).
int launch_attractor_record(float* bank, const float* field, const int64_t* slot,
                            int64_t slot_stride, int64_t batch, int64_t slots, int64_t resolution,
                            void* stream);
// field += the pull of every slot with a non-zero weight (brain/ops/attractor_pull.h); the
// workspace [B, 64(1+2A)] doubles (per-channel sums) is overwritten. Returns 0 or the first
// failing launch's cudaError_t.
int launch_attractor_pull(float* field, const float* bank, const float* weights, double* workspace,
                          int64_t batch, int64_t slots, int64_t resolution, void* stream);

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
