// Launcher of the CUDA field step (cuda/field_step_kernel.cu). Plain C++ on purpose: no
// LibTorch or CUDA headers, so the .cu compiles with nvcc alone and the torch-facing
// registration (cuda/field_step_cuda.cpp, FIELDBRAIN_CUDA=ON) only needs this declaration.
#pragma once

#include <cstddef>
#include <cstdint>

#include "brain/ops/field_step_arrays.h"

namespace fieldbrain {
namespace ops {
namespace cuda {

// The call's arrays in device memory, and the launch's scratch.
struct FieldStepDeviceArgs : FieldStepArrays {
  float* workspace = nullptr;  // field_step_workspace_floats(B, R) floats
};

// Scratch the launch needs: X2/Fn (64 ch), X3 and Aq (48 ch each), and 4 floats per robot.
size_t field_step_workspace_floats(int64_t batch, int64_t resolution);

// Enqueues the field step on `stream` (a cudaStream_t; nullptr = the default stream).
// Returns 0 or the cudaError_t of the first failing launch. Makes no host sync.
int launch_field_step(const FieldStepDeviceArgs& args, void* stream);

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
