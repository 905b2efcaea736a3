// CUDA kernels of the hierarchy-learning operators (cuda/launchers.h), calling the
// arithmetic of brain/ops/hierarchy_learn_math.h from their threads. Compiled with
// --fmad=false (brain/ops/CMakeLists.txt) so that no product is contracted into an FMA: the
// elementwise results are the CPU kernel's bit for bit. 32-bit index math within a robot.
#include "brain/ops/cuda/launchers.h"

#include <cuda_runtime.h>

#include "brain/ops/cuda/split_reduction_cuda.h"
#include "brain/ops/hierarchy_learn_math.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

namespace h = hierarchy;

constexpr int kReduceThreads = 256;  // channel means: a block-level reduction
constexpr int kTimescaleThreads = 128;
constexpr int kCubeThreads = 128;    // over a cube's voxels (at most 7^3 = 343)

// Sum of `value` over the block (blockDim.x == kReduceThreads); the result is valid in thread 0.
__device__ double block_sum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int half = kReduceThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  return shared[0];
}

// Block (c, b): the mean of channel c of robot b into pending[b][c].
__global__ void channel_means_kernel(const float* field, float* pending, uint32_t volume,
                                     int64_t width) {
  __shared__ double shared[kReduceThreads];
  const int c = blockIdx.x, b = blockIdx.y;
  const float* channel = field + (static_cast<int64_t>(b) * h::kChannels + c) * volume;
  float partial = 0.0f;  // at most volume / 256 values per thread (128 at R = 32)
  for (uint32_t v = threadIdx.x; v < volume; v += kReduceThreads) partial += channel[v];
  const double total = block_sum(static_cast<double>(partial), shared);
  if (threadIdx.x == 0) {
    pending[b * width + h::kPendingMeans + c] = static_cast<float>(total / static_cast<double>(volume));
  }
}

// Block (k, b): timescale k of robot b (targets, error ring, pending cubes, W[k]); block k = 0
// also pushes the input to the history (a slot no other block reads, see timescale_target).
__global__ void timescale_kernel(HierarchyObserveArgs args, int64_t width) {
  const int k = blockIdx.x, b = blockIdx.y;
  const int S = static_cast<int>(args.sensory_dim);
  const int64_t* f = args.facts + static_cast<int64_t>(b) * kFactColumns;
  const int64_t n = f[kFactCycle], h_before = f[kFactHistCount];
  const float* a = args.sensors + static_cast<int64_t>(b) * S;
  float* hist = args.hist + static_cast<int64_t>(b) * h::kHistCapacity * S;
  float* row = args.pending + b * width;
  float* targets = row + h::kPendingTargets + k * S;
  const float* hp = args.hpred + (static_cast<int64_t>(b) * h::kTimescales + k) * S;
  for (int s = threadIdx.x; s < S; s += blockDim.x) {
    targets[s] = h::timescale_target(a, hist, h_before, S, s, k);
  }
  __syncthreads();  // the targets are read across threads below
  if (k == 0) {
    float* slot = hist + (h_before % h::kHistCapacity) * S;
    for (int s = threadIdx.x; s < S; s += blockDim.x) slot[s] = a[s];
  }
  if (threadIdx.x == 0) {
    h::timescale_finish(n, h_before, f[kFactHerrCount0 + k], hp,
                        args.herr[k] + static_cast<int64_t>(b) * h::kHerrCapacity, row, S, k);
  }
  if (!h::timescale_active(n, h_before + 1, k)) return;
  float* w = args.W + (static_cast<int64_t>(b) * h::kTimescales + k) * h::kSites * S;
  for (int idx = threadIdx.x; idx < h::kSites * S; idx += blockDim.x) {
    const int j = idx / S, s = idx % S;
    w[idx] = h::learned_weight(w[idx], row[h::kPendingMeans + k * h::kSites + j], targets[s],
                               hp[s], k);
  }
}

// Block (c, b): adds the pending value on channel c's cube of robot b.
__global__ void apply_kernel(float* field, const float* pending, int R, int64_t width) {
  const int c = blockIdx.x, b = blockIdx.y, i = c % h::kSites;
  const float* row = pending + b * width;
  const int s = h::pending_spread(row, c);
  if (s == 0) return;
  const float value = h::pending_value(row, c);
  const uint32_t volume = static_cast<uint32_t>(R) * R * R;
  float* channel = field + (static_cast<int64_t>(b) * h::kChannels + c) * volume;
  const int side = 2 * s + 1;
  for (int idx = threadIdx.x; idx < side * side * side; idx += blockDim.x) {
    const int x = h::site_coord(i, 0, R) - s + idx / (side * side);
    const int y = h::site_coord(i, 1, R) - s + (idx / side) % side;
    const int z = h::site_coord(i, 2, R) - s + idx % side;
    if (x < 0 || x >= R || y < 0 || y >= R || z < 0 || z >= R) continue;
    const uint32_t at = (static_cast<uint32_t>(x) * R + y) * R + z;
    channel[at] = channel[at] + value;
  }
}

}  // namespace

int launch(const HierarchyObserveArgs& args, void* stream) {
  if (args.batch == 0) return 0;
  const auto s = static_cast<cudaStream_t>(stream);
  const int64_t width = h::pending_width(args.sensory_dim);
  const uint32_t volume = static_cast<uint32_t>(args.resolution * args.resolution * args.resolution);
  channel_means_kernel<<<dim3(h::kChannels, static_cast<unsigned>(args.batch)), kReduceThreads, 0,
                         s>>>(args.field, args.pending, volume, width);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return static_cast<int>(err);
  timescale_kernel<<<dim3(h::kTimescales, static_cast<unsigned>(args.batch)), kTimescaleThreads, 0,
                     s>>>(args, width);
  return static_cast<int>(cudaGetLastError());
}

int launch(const HierarchyApplyArgs& a, void* stream) {
  float* field = a.field;
  const float* pending = a.pending;
  const int64_t batch = a.batch, resolution = a.resolution, pending_width = a.pending_width;
  if (batch == 0) return 0;
  apply_kernel<<<dim3(h::kChannels, static_cast<unsigned>(batch)), kCubeThreads, 0,
                 static_cast<cudaStream_t>(stream)>>>(field, pending, static_cast<int>(resolution),
                                                      pending_width);
  return static_cast<int>(cudaGetLastError());
}

// The error field spreads every robot's voxels over the GPU (cuda/split_reduction_kernel.cu).
int launch(const ErrorFieldArgs& a, void* stream) {
  return launch_error_field(a.e, a.facts, a.ef, a.has_ef, a.boost, a.batch, a.sensory_dim,
                            a.resolution, stream);
}

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
