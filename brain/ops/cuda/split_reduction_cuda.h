// Launchers of the split reductions (cuda/split_reduction_kernel.cu): a robot's reductions
// spread over many blocks (brain/ops/split_reduction_math.h). Plain C++, no LibTorch
// or CUDA headers. Each enqueues on `stream` (a cudaStream_t), makes no host sync, allocates
// nothing (the caller's workspace holds the partials) and returns 0 or a cudaError_t.
#pragma once

#include <cstdint>

namespace fieldbrain {
namespace ops {
namespace cuda {

// The field step's statistics of Ef: per robot b, stats[4b] = max|ef|, stats[4b+1] =
// min(0.5, mean|ef|), stats[4b+2] = 0 (the max x4_stats_kernel accumulates). `partials` holds
// B * split::kEfPartialFloats floats.
int launch_ef_stats(const float* ef, float* stats, float* partials, int64_t batch,
                       int64_t resolution, void* stream);

// The error field (step 3) as error_field_update_ does it (cuda/launchers.h), one
// thread per voxel of every robot; no scratch. Called by launch(ErrorFieldArgs).
int launch_error_field(const float* e, const int64_t* facts, float* ef, float* has_ef,
                          float* boost, int64_t batch, int64_t sensory_dim, int64_t resolution,
                          void* stream);

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
