// CUDA kernels of the reward attractors (brain/ops/attractor_pull.h), raw CUDA C++ without
// LibTorch headers. Stream-ordered, no host sync; which slots pull is read from the weight
// table on the device, so the launches are the same every cycle (graph-capturable).
//   record: a grid over (robot x channel, voxel blocks); robots with slot < 0 return at once.
//   shadow: with attractor_pull_'s store, one block per (robot x channel) of a storing robot:
//           the channel's largest |value| (a block max), then its 16-bit levels and step by the
//           rule of brain/ops/attractor_math.h.
//   pull:   1. one block per (slot, robot x channel): block-reduce F.P and |P|^2 of a slot with
//           a weight (block 0 also |F|^2) into the channel's sums (no atomics: the same bits
//           every run, so a graph replay equals an eager cycle), F being `next` and P the slot's
//           16-bit shadow (half the bytes; the slot stored this cycle too, as on the CPU);
//           2. per (robot x channel, voxel block): the coefficients from the 64 channels' sums
//           added in channel order (shared memory), then field = next + sum_j c_j (P_j - next)
//           with P_j from the shadow (levels * step), a copy of next for a robot no slot pulls.
// Index math is 32-bit inside a channel (R <= 1024 is checked by the caller: R^3 < 2^31); the
// channel's base offset is 64-bit.
#include <cuda_runtime.h>

#include "brain/ops/attractor_math.h"
#include "brain/ops/cuda/launchers.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kVoxelsPerThread = 4;
constexpr int kMaxSlots = 256;  // BrainConfig's attractor_capacity limit

__device__ __forceinline__ double warp_sum(double v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Sum of v over the block; the result is valid in thread 0. `shared` holds kThreads/32 doubles.
__device__ double block_sum(double v, double* shared) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  v = warp_sum(v);
  __syncthreads();  // `shared` may still be read by the previous call
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  double total = 0.0;
  if (warp == 0) {
    total = lane < kThreads / 32 ? shared[lane] : 0.0;
    total = warp_sum(total);
  }
  return total;
}

// Largest v over the block (v >= 0); the result is valid in every thread. `shared` holds
// kThreads/32 floats. A maximum is exact in any order.
__device__ float block_max(float v, float* shared) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int offset = 16; offset > 0; offset /= 2) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, offset));
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float m = 0.f;
  for (int k = 0; k < kThreads / 32; ++k) m = fmaxf(m, shared[k]);
  return m;
}

__global__ void record_kernel(float* bank, const float* field, const int64_t* slot,
                              int64_t slot_stride, int slots, int V) {
  const int bc = blockIdx.y, b = bc / 64, c = bc % 64;
  const int64_t j = slot[b * slot_stride];
  if (j < 0 || j >= slots) return;
  const float* from = field + static_cast<int64_t>(bc) * V;
  const int64_t at = (static_cast<int64_t>(b) * slots + j) * 64 * V + static_cast<int64_t>(c) * V;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < V; i += gridDim.x * blockDim.x) {
    bank[at + i] = from[i];
  }
}

// Block (robot x channel) of a storing robot: the slot's shadow channel from the field's.
__global__ void shadow_kernel(int16_t* shadow, float* shadow_scale, const float* field,
                              const int64_t* slot, int64_t slot_stride, int slots, int V) {
  __shared__ float shared[kThreads / 32];
  const int bc = blockIdx.x, b = bc / 64, c = bc % 64;
  const int64_t j = slot[b * slot_stride];
  if (j < 0 || j >= slots) return;  // the same for the whole block
  const float* from = field + static_cast<int64_t>(bc) * V;
  float m = 0.f;
  for (int i = threadIdx.x; i < V; i += kThreads) m = fmaxf(m, fabsf(attractor_shadow_clamp(from[i])));
  const AttractorShadowStep step = attractor_shadow_step(block_max(m, shared));
  const int64_t channel = (static_cast<int64_t>(b) * slots + j) * 64 + c;
  int16_t* to = shadow + channel * V;
  for (int i = threadIdx.x; i < V; i += kThreads) {
    to[i] = attractor_shadow_level(attractor_shadow_clamp(from[i]), step.inverse);
  }
  if (threadIdx.x == 0) shadow_scale[channel] = step.scale;
}

// Block (j, robot x channel): slot j's F.P and |P|^2 over the channel when slot j pulls, and
// block j = 0 also |F|^2 when any slot pulls. One block per pulling slot and channel (not one
// per channel walking every slot): at B = 1 the 64 channels alone leave most SMs idle, and the
// bank's bytes are what this kernel moves. Zero-weight slots return at once, unread.
__global__ void sums_kernel(const float* field, const int16_t* shadow, const float* shadow_scale,
                            const float* weights, double* workspace, int slots, int V) {
  __shared__ double shared[kThreads / 32];
  const int j = blockIdx.x, bc = blockIdx.y, b = bc / 64, c = bc % 64;
  const int width = attractor_sums_width(slots);
  const float* w = weights + static_cast<int64_t>(b) * slots * kAttractorWeightColumns;
  const bool pulls = w[j * kAttractorWeightColumns + kAttractorWeight] != 0.f;
  bool any = pulls;
  for (int k = 0; k < slots && j == 0 && !any; ++k) any = w[k * kAttractorWeightColumns + kAttractorWeight] != 0.f;
  const bool norm = j == 0 && any;
  if (!norm && !pulls) return;  // the same for the whole block: no barrier is skipped by part of it
  const float* f = field + static_cast<int64_t>(bc) * V;
  double* part = workspace + static_cast<int64_t>(bc) * width;  // this channel's sums
  if (norm) {
    double ff = 0.0;
    for (int i = threadIdx.x; i < V; i += kThreads) ff += static_cast<double>(f[i]) * f[i];
    ff = block_sum(ff, shared);
    if (threadIdx.x == 0) part[0] = ff;
  }
  if (!pulls) return;
  const int64_t at = (static_cast<int64_t>(b) * slots + j) * 64 * V + static_cast<int64_t>(c) * V;
  // The slot's shadow levels (half the bytes; the slot stored this cycle included: the shadow
  // kernel wrote it first, in the same stream), the step applied to the totals.
  const int16_t* p = shadow + at;
  double fp = 0.0, pp = 0.0;
  for (int i = threadIdx.x; i < V; i += kThreads) {
    const double q = static_cast<double>(p[i]);
    fp += static_cast<double>(f[i]) * q;
    pp += q * q;
  }
  fp = block_sum(fp, shared);
  pp = block_sum(pp, shared);
  if (threadIdx.x == 0) {
    const double step = shadow_scale[at / V];
    part[1 + 2 * j] = fp * step;
    part[2 + 2 * j] = pp * step * step;
  }
}

__global__ void pull_kernel(float* field, const float* next, const int16_t* shadow,
                            const float* shadow_scale, const float* weights,
                            const double* workspace, int slots, int V) {
  __shared__ float coef[kMaxSlots];
  __shared__ float step[kMaxSlots];
  __shared__ int any;
  const int bc = blockIdx.y, b = bc / 64, c = bc % 64;
  const int width = attractor_sums_width(slots);
  const float* w = weights + static_cast<int64_t>(b) * slots * kAttractorWeightColumns;
  const double* sums = workspace + static_cast<int64_t>(b) * 64 * width;
  if (threadIdx.x == 0) any = 0;
  __syncthreads();
  for (int j = threadIdx.x; j < slots; j += blockDim.x) {
    const float weight = w[j * kAttractorWeightColumns + kAttractorWeight];
    coef[j] = 0.f;
    step[j] = shadow_scale[(static_cast<int64_t>(b) * slots + j) * 64 + c];
    if (weight == 0.f) continue;
    double ff = 0.0, fp = 0.0, pp = 0.0;  // in channel order, as the CPU adds them
    for (int k = 0; k < 64; ++k) {
      ff += sums[k * width];
      fp += sums[k * width + 1 + 2 * j];
      pp += sums[k * width + 2 + 2 * j];
    }
    coef[j] = static_cast<float>(attractor_coefficient(
        weight, w[j * kAttractorWeightColumns + kAttractorValence], ff, fp, pp));
    any = 1;
  }
  __syncthreads();
  float* f = field + static_cast<int64_t>(bc) * V;
  const float* x = next + static_cast<int64_t>(bc) * V;
  const int first = blockIdx.x * kThreads * kVoxelsPerThread + threadIdx.x;
  for (int k = 0; k < kVoxelsPerThread; ++k) {
    const int i = first + k * kThreads;
    if (i >= V) break;
    const float fi = x[i];
    float total = 0.f;
    if (!any) {  // no slot pulls this robot: the field is next
      f[i] = fi;
      continue;
    }
    for (int j = 0; j < slots; ++j) {
      if (coef[j] == 0.f) continue;
      const int16_t q = shadow[((static_cast<int64_t>(b) * slots + j) * 64 + c) * V + i];
      total += (static_cast<float>(q) * step[j] - fi) * coef[j];
    }
    f[i] = fi + total;
  }
}

}  // namespace

int launch(const AttractorRecordArgs& a, void* stream) {
  float* bank = a.bank;
  const float* field = a.field;
  const int64_t* slot = a.slot;
  const int64_t slot_stride = a.slot_stride;
  const int64_t batch = a.batch, slots = a.slots, resolution = a.resolution;
  const int V = static_cast<int>(resolution * resolution * resolution);
  if (batch == 0 || V == 0) return 0;
  if (batch * 64 > 65535) return static_cast<int>(cudaErrorInvalidConfiguration);  // grid.y
  const auto s = static_cast<cudaStream_t>(stream);
  const dim3 grid(static_cast<unsigned>((V + kThreads * kVoxelsPerThread - 1) / (kThreads * kVoxelsPerThread)),
                  static_cast<unsigned>(batch * 64));
  record_kernel<<<grid, kThreads, 0, s>>>(bank, field, slot, slot_stride, static_cast<int>(slots), V);
  if (a.shadow != nullptr) {
    shadow_kernel<<<static_cast<unsigned>(batch * 64), kThreads, 0, s>>>(
        a.shadow, a.shadow_scale, field, slot, slot_stride, static_cast<int>(slots), V);
  }
  return static_cast<int>(cudaGetLastError());
}

int launch(const AttractorPullArgs& a, void* stream) {
  // Step 6's store first (the CPU kernel fuses it into the pull's first pass; here it stays
  // the record kernel, one launch in the same stream, so the graph's launches are unchanged).
  if (a.slot != nullptr) {
    const int stored = launch(a.record(), stream);
    if (stored != 0) return stored;
  }
  float* field = a.field;
  const float *next = a.next, *weights = a.weights;
  double* workspace = a.workspace;
  const int64_t batch = a.batch, slots = a.slots, resolution = a.resolution;
  const int V = static_cast<int>(resolution * resolution * resolution);
  if (batch == 0 || V == 0) return 0;
  if (slots > kMaxSlots) return static_cast<int>(cudaErrorInvalidValue);
  if (batch * 64 > 65535) return static_cast<int>(cudaErrorInvalidConfiguration);  // grid.y
  const auto s = static_cast<cudaStream_t>(stream);
  sums_kernel<<<dim3(static_cast<unsigned>(slots), static_cast<unsigned>(batch * 64)), kThreads, 0, s>>>(
      next, a.shadow, a.shadow_scale, weights, workspace, static_cast<int>(slots), V);
  const dim3 grid(static_cast<unsigned>((V + kThreads * kVoxelsPerThread - 1) / (kThreads * kVoxelsPerThread)),
                  static_cast<unsigned>(batch * 64));
  pull_kernel<<<grid, kThreads, 0, s>>>(field, next, a.shadow, a.shadow_scale, weights,
                                        workspace, static_cast<int>(slots), V);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
