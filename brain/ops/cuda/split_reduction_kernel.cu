// The per-robot reductions of the field step's statistics of Ef and of the error field, spread
// over many blocks per robot (one block per robot left all but B SMs idle: docs/gpu.md "Kernel
// sets"), with the index and reduction arithmetic of brain/ops/split_reduction_math.h (tested
// on the CPU against the CPU kernels by test/ops/split_reduction_test.cpp). Raw CUDA C++
// without LibTorch headers.
// Compiled with --fmad=false (brain/ops/CMakeLists.txt): the error field's values are the CPU
// kernel's bit for bit. No atomics, no host sync, no allocation: a robot's order of additions is
// fixed (its slices do not depend on the batch), so a graph replay equals an eager launch and a
// robot alone equals the robot in a batch.
//   ef_stats_partial: grid (kEfSlices, B): each block reduces one slice of a robot's Ef into a
//                     partial (max, sum) in the field step's workspace;
//   ef_stats_finish:  one thread per robot adds its partials in slice order;
//   error_field:      grid (ceil(R^3 / 256), B): one thread per voxel writes Ef; the robot's
//                     first block also sums |Ef| over the R^2 columns (three classes of z each)
//                     and writes has_ef and boost.
// Index math is 32-bit inside a robot (R <= 1024: R^3 <= 2^30); robot offsets are 64-bit.
#include <cuda_runtime.h>

#include "brain/ops/cuda/split_reduction_cuda.h"
#include "brain/ops/split_reduction_math.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

namespace h = hierarchy;
using split::kThreads;

__global__ void __launch_bounds__(kThreads)
    ef_stats_partial_kernel(const float* ef, float* partials, int64_t V) {
  __shared__ split::AbsStats p[kThreads];
  const int slice = blockIdx.x, t = threadIdx.x;
  const int64_t b = blockIdx.y;
  p[t] = split::abs_stats_thread(ef + b * V, split::slice_begin(V, slice),
                                 split::slice_begin(V, slice + 1), t);
  __syncthreads();
  for (int step = kThreads / 2; step > 0; step /= 2) {
    if (t < step) split::tree_step(p, t, step);
    __syncthreads();
  }
  if (t == 0) split::store_partial(p[0], partials + b * split::kEfPartialFloats, slice);
}

__global__ void __launch_bounds__(kThreads)
    ef_stats_finish_kernel(const float* partials, float* stats, int64_t batch, int64_t V) {
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (b >= batch) return;
  float max = 0.0f, weight = 0.0f;
  split::finish_ef_stats(partials + b * split::kEfPartialFloats, V, &max, &weight);
  stats[b * 4 + 0] = max;
  stats[b * 4 + 1] = weight;
  stats[b * 4 + 2] = 0.0f;  // max|Fn[0:48]|, accumulated by x4_stats_kernel
}

__global__ void __launch_bounds__(kThreads)
    error_field_kernel(const float* e, const int64_t* facts, float* ef, float* has_ef,
                          float* boost, int S, int R) {
  const int b = blockIdx.y, t = threadIdx.x;
  if (facts[static_cast<int64_t>(b) * kFactColumns + kFactCycle] < 1) return;  // whole block
  __shared__ float up[h::kSites], down[h::kSites], base;
  __shared__ int sx[h::kSites], sy[h::kSites];
  __shared__ split::ColumnClasses classes;
  __shared__ double partial[kThreads];
  if (t == 0) {
    base = h::error_field_terms(e + static_cast<int64_t>(b) * S, S, up, down);
    split::site_coords(R, sx, sy);
    classes = split::column_classes(R);
  }
  __syncthreads();
  const uint32_t V = static_cast<uint32_t>(R) * R * R;
  const uint32_t v = blockIdx.x * kThreads + t;
  if (v < V) {
    const int x = static_cast<int>(v / (R * R)), y = static_cast<int>((v / R) % R),
              z = static_cast<int>(v % R);
    ef[static_cast<int64_t>(b) * V + v] = split::error_field_value_at(up, down, base, sx, sy, R, x, y, z);
  }
  if (blockIdx.x != 0) return;  // whole block: the robot's first block finishes it
  partial[t] = split::columns_thread(up, down, base, sx, sy, R, classes, t);
  __syncthreads();
  for (int step = kThreads / 2; step > 0; step /= 2) {
    if (t < step) partial[t] += partial[t + step];
    __syncthreads();
  }
  if (t == 0) {
    has_ef[b] = 1.0f;
    boost[b] = h::error_boost(static_cast<float>(partial[0] / static_cast<double>(V)));
  }
}

}  // namespace

int launch_ef_stats(const float* ef, float* stats, float* partials, int64_t batch,
                       int64_t resolution, void* stream_ptr) {
  if (batch == 0 || resolution == 0) return 0;
  if (batch > 65535) return static_cast<int>(cudaErrorInvalidConfiguration);  // grid.y
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  const int64_t V = resolution * resolution * resolution;
  ef_stats_partial_kernel<<<dim3(split::kEfSlices, static_cast<unsigned>(batch)), kThreads, 0, stream>>>(
      ef, partials, V);
  ef_stats_finish_kernel<<<static_cast<unsigned>((batch + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
      partials, stats, batch, V);
  return static_cast<int>(cudaGetLastError());
}

int launch_error_field(const float* e, const int64_t* facts, float* ef, float* has_ef,
                          float* boost, int64_t batch, int64_t sensory_dim, int64_t resolution,
                          void* stream) {
  if (batch == 0 || resolution == 0) return 0;
  if (batch > 65535) return static_cast<int>(cudaErrorInvalidConfiguration);  // grid.y
  const int64_t V = resolution * resolution * resolution;
  const dim3 grid(static_cast<unsigned>((V + kThreads - 1) / kThreads), static_cast<unsigned>(batch));
  error_field_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      e, facts, ef, has_ef, boost, static_cast<int>(sensory_dim), static_cast<int>(resolution));
  return static_cast<int>(cudaGetLastError());
}

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
