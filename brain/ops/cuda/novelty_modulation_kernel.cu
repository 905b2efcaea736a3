// CUDA kernel of fieldbrain::novelty_modulation_ (brain/ops/novelty_modulation.h), raw CUDA C++
// without LibTorch headers (see cuda/launchers.h). One launch, one block of 256 threads
// per robot, no atomics, no host sync:
//   1. the 512-element sample of the corner block into shared memory (two values per thread),
//      its squared norm reduced per warp by shuffles and across warps in shared memory;
//   2. the 200 similarities: each warp takes memory entries j = warp, warp + 8, ...; its lanes
//      read the entry's 512 floats coalesced (16 each) and reduce the dot product by shuffles;
//      the best weighted similarity is reduced per warp, then across warps in shared memory;
//   3. after a barrier (every reader of the memory is done) the block writes the sample into
//      slot count mod 200 and thread 0 runs the scalar rest (modulation::finish_robot).
// Index math is 32-bit inside a robot's memory (200 x 512 floats); robot offsets are 64-bit.
#include <cuda_runtime.h>

#include "brain/ops/cuda/launchers.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

using namespace modulation;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// The larger of two similarities, NaN winning (as amax does).
__device__ __forceinline__ float nan_max(float a, float b) { return (b > a || isnan(b)) ? b : a; }

__global__ void __launch_bounds__(kThreads) novelty_modulation_kernel(ModulationArrays a) {
  const int64_t b = blockIdx.x;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  __shared__ float v[kNovDim];
  __shared__ float partial[kWarps];
  __shared__ float norm;

  const int64_t R = a.resolution;
  const float* F = a.field + b * 64 * R * R * R;
  float ss = 0.f;
  for (int i = tid; i < kNovDim; i += kThreads) {
    const float x = F[corner_offset(i, R)];
    v[i] = x;
    ss += x * x;
  }
  ss = warp_sum(ss);
  if (lane == 0) partial[warp] = ss;
  __syncthreads();
  if (tid == 0) {
    float total = 0.f;
    for (int w = 0; w < kWarps; ++w) total += partial[w];
    norm = sqrtf(total) + 1e-8f;
  }
  __syncthreads();
  for (int i = tid; i < kNovDim; i += kThreads) v[i] = v[i] / norm;
  __syncthreads();

  const int64_t* f = a.facts + b * kFactColumns;
  const int64_t n = f[kFactCycle], count = f[kFactNovCount];
  float* nov = a.nov + b * kNovCapacity * kNovDim;
  int64_t* ts = a.nov_ts + b * kNovCapacity;
  float best = -1.0f;  // anything below 0 counts as 0
  for (int j = warp; j < kNovCapacity; j += kWarps) {
    const float w = memory_weight(n, ts[j], j, count);  // the same for the whole warp
    if (w < 0.f) continue;
    const float* row = nov + j * kNovDim;
    float d = 0.f;
    for (int k = lane; k < kNovDim; k += 32) d += row[k] * v[k];
    d = warp_sum(d);
    if (lane == 0) best = nan_max(best, d * w);
  }
  __syncthreads();  // partial[] is free again
  if (lane == 0) partial[warp] = best;
  __syncthreads();

  const int slot = static_cast<int>(count % kNovCapacity);
  for (int i = tid; i < kNovDim; i += kThreads) nov[slot * kNovDim + i] = v[i];
  if (tid == 0) {
    float top = partial[0];
    for (int w = 1; w < kWarps; ++w) top = nan_max(top, partial[w]);
    ts[slot] = n;
    finish_robot(a, b, top);
  }
}

}  // namespace

int launch(const ModulationArrays& arrays, void* stream) {
  if (arrays.batch == 0) return 0;
  novelty_modulation_kernel<<<static_cast<unsigned>(arrays.batch), kThreads, 0,
                              static_cast<cudaStream_t>(stream)>>>(arrays);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
