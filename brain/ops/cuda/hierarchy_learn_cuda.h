// Launchers of the CUDA hierarchy-learning kernels (cuda/hierarchy_learn_kernel.cu). Plain C++,
// no LibTorch or CUDA headers (see field_readout_cuda.h). All pointers are contiguous device
// arrays with the shapes of brain/ops/hierarchy_learn.h; each launcher enqueues on `stream` (a
// cudaStream_t; nullptr = the default stream), makes no host sync, needs no workspace and
// returns 0 or the cudaError_t of the first failing launch.
#pragma once

#include <cstdint>

namespace fieldbrain {
namespace ops {
namespace cuda {

struct HierarchyObserveArgs {
  const float* field;    // [B,64,R,R,R]
  const float* sensors;  // [B,S]
  const int64_t* facts;  // [B,16]
  const float* hpred;    // [B,4,S]
  float* hist;           // [B,1000,S]
  float* herr[4];        // [B,50] each
  float* W;              // [B,4,16,S]
  float* pending;        // [B, pending_width(S)]
  int64_t batch, sensory_dim, resolution;
};

int launch_hierarchy_observe(const HierarchyObserveArgs& args, void* stream);
int launch_hierarchy_apply(float* field, const float* pending, int64_t batch, int64_t resolution,
                           int64_t pending_width, void* stream);
int launch_error_field_update(const float* e, const int64_t* facts, float* ef, float* has_ef,
                              float* boost, int64_t batch, int64_t sensory_dim, int64_t resolution,
                              void* stream);

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
