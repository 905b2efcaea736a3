// Launcher of the CUDA imprint (cuda/sensory_imprint_kernel.cu). Plain C++ on purpose: no
// LibTorch or CUDA headers, so the .cu compiles with nvcc alone and the torch-facing
// registration (cuda/sensory_imprint_cuda.cpp, FIELDBRAIN_CUDA=ON) only needs this declaration.
#pragma once

#include "brain/ops/sensory_imprint_arrays.h"

namespace fieldbrain {
namespace ops {
namespace cuda {

// Enqueues the two launches of the imprint on `stream` (a cudaStream_t; nullptr = the default
// stream) and returns 0 or the cudaError_t of the first failing launch. No host sync, no
// workspace beyond the arrays' scratch.
int launch_sensory_imprint(const ImprintArrays& arrays, void* stream);

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
