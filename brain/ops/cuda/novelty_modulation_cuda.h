// Launcher of the CUDA modulation (cuda/novelty_modulation_kernel.cu). Plain C++ on purpose: no
// LibTorch or CUDA headers, so the .cu compiles with nvcc alone and the torch-facing
// registration (cuda/novelty_modulation_cuda.cpp, FIELDBRAIN_CUDA=ON) only needs this
// declaration.
#pragma once

#include <cstdint>

#include "brain/ops/novelty_modulation_math.h"

namespace fieldbrain {
namespace ops {
namespace cuda {

// Every pointer in `arrays` is a device array as brain/ops/novelty_modulation.h describes.
// Enqueues one launch (one thread block per robot) on `stream` (a cudaStream_t; nullptr = the
// default stream) and returns 0 or the cudaError_t of the launch. Makes no host sync and needs
// no workspace.
int launch_novelty_modulation(const modulation::ModulationArrays& arrays, int64_t batch,
                              void* stream);

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
