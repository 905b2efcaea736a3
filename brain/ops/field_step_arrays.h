// The arrays of one field-step call as raw pointers, shared by the CPU passes
// (cpu/field_step_passes.h) and the CUDA launcher (cuda/launchers.h). Plain C++ with no
// LibTorch or CUDA headers, so nvcc compiles the kernels from it alone.
#pragma once

#include <cstdint>

namespace fieldbrain {
namespace ops {

// Borrowed pointers to contiguous float32 arrays (shapes as in brain/field_dynamics.h), on
// the device the kernel runs on.
struct FieldStepArrays {
  const float* field = nullptr;    // [B,64,R,R,R]
  const float* noise = nullptr;    // [B,48,R,R,R]; null: made in the kernel from noise_key
  const int64_t* noise_key = nullptr;  // [B,2] (seed, cycle) per robot, used when noise is null
  const float* wave = nullptr;     // [B,R,R,R]
  const float* ef = nullptr;       // [B,R,R,R]
  const float* scalars = nullptr;  // [B,8]
  float* out = nullptr;            // [B,64,R,R,R], must not overlap the inputs
  float* workspace = nullptr;      // CUDA only: field_step_workspace_floats(B, R) floats
  int64_t batch = 0;
  int64_t resolution = 0;
};

}  // namespace ops
}  // namespace fieldbrain
