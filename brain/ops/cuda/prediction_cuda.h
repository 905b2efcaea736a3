// Launchers of the CUDA prediction kernels (cuda/prediction_kernel.cu). Plain C++ on purpose:
// no LibTorch or CUDA headers, so the .cu compiles with nvcc alone and the torch-facing
// registration (cuda/prediction_cuda.cpp, FIELDBRAIN_CUDA=ON) only needs these declarations.
#pragma once

#include <cstdint>

#include "brain/ops/prediction_math.h"

namespace fieldbrain {
namespace ops {
namespace cuda {

// Enqueue on `stream` (a cudaStream_t; nullptr = the default stream); return 0 or the
// cudaError_t of the first failing launch. No host sync, no workspace. The pointers in the
// argument structs are device pointers.
int launch_prediction_score(const prediction::ScoreArgs& args, int64_t batch, void* stream);
int launch_prediction_act(const prediction::ActArgs& args, int64_t batch, void* stream);

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
