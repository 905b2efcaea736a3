// CUDA kernels of the field step (docs/cycle.md step 7, items 1-8), raw CUDA C++ without
// LibTorch headers (see cuda/launchers.h). Seven launches, all stream-ordered, no host sync:
//   1. per robot: max|ef|, mean|ef|; reset the robot's max|Fn[0:48]| (two launches,
//      ef_stats_partial and ef_stats_finish in split_reduction_kernel.cu: 64 blocks per robot)
//   2. X2 (decay + temporal shift + spontaneous activity), 48 channels, one thread per Philox
//      block of four noise values
//   3. X3 (learned diffusion) and Aq = tanh(X3 * pl0), 48 channels
//   4a. per element: X4 (coupling) for the 48 channels; writes Fn[0:48] (raw X4 kept in X3's space)
//   4b. per voxel: the 48 channels' statistics, D1 (self-modification, error-field modulation),
//       NaN repair, clamp; writes Fn[48:64] and the robot's max|Fn[0:48]|
//   5. the squash (tanh when max > 2) and the global periodic diffusion into out, grid
//      (voxels, channel, robot)
// The robot is a grid dimension of launches 1, 2 and 5, so B <= 65,535.
#include "brain/ops/cuda/launchers.h"

#include <cuda_runtime.h>

#include "brain/ops/cuda/split_reduction_cuda.h"
#include "brain/ops/philox.h"
#include "brain/ops/split_reduction_math.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

constexpr int kThreads = 256;

// Index math: in x3, x4_coupling and x4_stats a thread's global index (over B*48 channels, or
// B robots, of V voxels) is 64-bit, and one 64-bit division turns it into (channel, voxel); x2
// and diffuse take the robot and channel from the grid; everything inside a channel is 32-bit
// (voxel index, coordinates, their divisions and the stencils' neighbour offsets): the caller
// refuses R > 1024, so R^3 <= 2^30 fits an int. Channel strides stay 64-bit (V is int64_t,
// so c * V is a 64-bit product: 64 channels of 2^30 voxels would overflow an int).
struct Dims {
  int64_t B, V;
  int R, P;
};

// Voxel v of a channel as (x, y, z), 32-bit.
struct Voxel {
  int x, y, z;
};
__device__ __forceinline__ Voxel voxel_of(int v, const Dims& d) {
  return {v / d.P, (v / d.R) % d.R, v % d.R};
}

__device__ __forceinline__ float sigmoidf_(float x) { return 1.f / (1.f + expf(-x)); }
__device__ __forceinline__ float repair(float x) { return isnan(x) ? 0.f : x; }

// Zero padding outside [0, R).
__device__ __forceinline__ float at_or_zero(const float* ch, const Dims& d, int x, int y, int z) {
  if (x < 0 || y < 0 || z < 0 || x >= d.R || y >= d.R || z >= d.R) return 0.f;
  return ch[(x * d.R + y) * d.R + z];
}

// X1 of channel c < 48 at voxel v of one robot's field F (decay and temporal shift).
__device__ __forceinline__ float x1_value(const float* F, int c, int64_t v, const Dims& d, float gmu) {
  const float* D = F + 48 * d.V;
  if (c < 32) return F[c * d.V + v] * (sigmoidf_(D[(c % 4) * d.V + v]) * gmu);
  const float mean = (((sigmoidf_(D[v]) + sigmoidf_(D[d.V + v])) + sigmoidf_(D[2 * d.V + v])) +
                      sigmoidf_(D[3 * d.V + v])) / 4.f * gmu;
  float x1 = 0.85f * (F[c * d.V + v] * mean);
  if (c > 32) x1 += 0.15f * (F[(c - 1) * d.V + v] * mean);
  return x1;
}

// Grid (Philox blocks of a robot / 256, robot); thread k makes the robot's Philox block k once
// (brain/ops/philox.h, stream kStreamSpontaneous) and writes its four elements c*V + v of the
// robot's [48,R,R,R] with all four values (split::noise_block): each element gets the normal
// philox::normal draws for its index, for a quarter of the Philox work of one draw per element,
// and no 64-bit division per element. With a noise array the values come from it instead.
__global__ void x2_kernel(const float* field, const float* noise, const int64_t* noise_key,
                          const float* wave, const float* scalars, float* x2, Dims d) {
  const int64_t b = blockIdx.y;
  const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const split::NoiseBlock blk = split::noise_block(k, d.V);
  if (blk.count == 0) return;
  const float* F = field + b * 64 * d.V;
  const float* sc = scalars + b * 8;
  const float gmu = sc[0] * 0.999f, drive = sc[1];
  float z[4] = {0.f, 0.f, 0.f, 0.f};
  if (noise == nullptr) {
    philox::normal4(static_cast<uint64_t>(noise_key[2 * b]), static_cast<uint64_t>(noise_key[2 * b + 1]),
                    philox::kStreamSpontaneous, static_cast<uint32_t>(k), z);
  }
  float* out = x2 + b * 48 * d.V;
#pragma unroll
  for (int j = 0; j < 4; ++j) {  // unrolled: z stays in registers
    if (j >= blk.count) break;
    int c;
    int64_t v;
    split::noise_block_element(blk, d.V, j, &c, &v);
    const int64_t e = static_cast<int64_t>(c) * d.V + v;
    const float eps = noise != nullptr ? noise[b * 48 * d.V + e] : z[j];
    out[e] = x1_value(F, c, v, d, gmu) + (0.001f * eps + 0.001f * wave[b * d.V + v]) * drive;
  }
}

__global__ void x3_kernel(const float* field, const float* x2, float* x3, float* aq, Dims d) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= d.B * 48 * d.V) return;
  const int64_t chan = i / d.V;  // b * 48 + c
  const int v = static_cast<int>(i - chan * d.V);
  const int64_t b = chan / 48;
  const auto [x, y, z] = voxel_of(v, d);
  const float* D = field + (b * 64 + 48) * d.V;
  const float* ch = x2 + (i - v);
  const float c = ch[v];
  const float lx = (at_or_zero(ch, d, x - 1, y, z) + at_or_zero(ch, d, x + 1, y, z)) - 2.f * c;
  const float ly = (at_or_zero(ch, d, x, y - 1, z) + at_or_zero(ch, d, x, y + 1, z)) - 2.f * c;
  const float lz = (at_or_zero(ch, d, x, y, z - 1) + at_or_zero(ch, d, x, y, z + 1)) - 2.f * c;
  const float r = ((c + lx * (tanhf(D[4 * d.V + v]) * 0.1f)) + ly * (tanhf(D[5 * d.V + v]) * 0.1f)) +
                  lz * (tanhf(D[6 * d.V + v]) * 0.1f);
  x3[i] = r;
  aq[i] = tanhf(r * sigmoidf_(D[12 * d.V + v]));
}

// Non-negative floats order like their bit patterns as ints.
__device__ __forceinline__ void atomic_max_nonneg(float* addr, float value) {
  atomicMax(reinterpret_cast<int*>(addr), __float_as_int(value));
}

// 4a. X4 (coupling) per (robot, channel < 48, voxel): one thread per element, so a small batch
// still fills the GPU (one thread per voxel looping over 48 channels left an R = 32 robot with
// 32,768 threads and made this step most of the field step). The raw X4 (NaN kept, for the
// statistics) overwrites X3 in place, each thread its own element; Fn gets the repaired value.
__global__ void x4_coupling_kernel(const float* field, float* x3_to_x4, const float* aq,
                                   float* fn, Dims d) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= d.B * 48 * d.V) return;
  const int64_t chan = i / d.V;  // b * 48 + c
  const int v = static_cast<int>(i - chan * d.V), c = static_cast<int>(chan % 48);
  const int64_t b = chan / 48;
  const auto [x, y, z] = voxel_of(v, d);
  const float* D = field + (b * 64 + 48) * d.V;
  const float cc = ((((D[8 * d.V + v] + D[9 * d.V + v]) + D[10 * d.V + v]) + D[11 * d.V + v]) / 4.f) *
                   sigmoidf_(D[13 * d.V + v]);
  const float* a = aq + chan * d.V;
  float box = 0.f;
  for (int dx = -1; dx <= 1; ++dx)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dz = -1; dz <= 1; ++dz) box += at_or_zero(a, d, x + dx, y + dy, z + dz);
  const float x4 = x3_to_x4[i] + 0.1f * (box - a[v]) * cc;
  x3_to_x4[i] = x4;
  fn[(b * 64 + c) * d.V + v] = repair(x4);
}

// Folds `value` (>= 0) into the robot's max slot: one atomic per warp when the warp's 32
// threads belong to one robot (always, when R^3 is a multiple of 32), else one per thread.
// Every thread of the warp must call it (inactive ones with value 0 and any valid robot).
__device__ __forceinline__ void warp_max_into(float* stats, int64_t b, float value) {
  const long long b0 = __shfl_sync(0xffffffffu, static_cast<long long>(b), 0);
  if (__all_sync(0xffffffffu, static_cast<long long>(b) == b0)) {
    for (int offset = 16; offset > 0; offset /= 2) {
      value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
    }
    if ((threadIdx.x & 31) == 0) atomic_max_nonneg(&stats[b * 4 + 2], value);
  } else {
    atomic_max_nonneg(&stats[b * 4 + 2], value);
  }
}

// 4b. Per voxel: the 48 channels' statistics of X4, D1 (self-modification, error-field
// modulation), NaN repair and clamp of the 16 dynamics channels, and the robot's max|Fn[0:48]|.
__global__ void x4_stats_kernel(const float* field, const float* ef, const float* scalars,
                                const float* x4, float* fn, float* stats, Dims d) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const bool active = i < d.B * d.V;
  float local_max = 0.f;
  const int64_t b = active ? i / d.V : d.B - 1;
  if (active) {
    const int v = static_cast<int>(i - b * d.V);
    const float* D = field + (b * 64 + 48) * d.V;
    const float* sc = scalars + b * 8;
    const float explore = sc[2], sigma = sc[3];
    const bool has_ef = sc[4] > 0.5f;
    float s_abs = 0.f, s_sum = 0.f, s_sq = 0.f, s_small = 0.f;
    for (int c = 0; c < 48; ++c) {
      const float value = x4[(b * 48 + c) * d.V + v];
      const float ax = fabsf(value);
      s_abs += ax;
      s_sum += value;
      s_sq += value * value;
      s_small += ax < 0.1f ? 1.f : 0.f;
      local_max = fmaxf(local_max, fabsf(repair(value)));
    }
    const float E = s_abs / 48.f;
    const float var = (s_sq - s_sum * (s_sum / 48.f)) / 47.f;
    const float Sp = s_small / 48.f;
    const float u[4] = {-(E * sigma), var * sigma, 0.5f * Sp * sigma,
                        0.5f * (E * explore - 0.5f) * sigma};
    const float mE = has_ef ? fabsf(ef[b * d.V + v]) / (stats[b * 4 + 0] + 1e-8f) : 0.f;
    const float wE = stats[b * 4 + 1];
    for (int j = 0; j < 16; ++j) {
      float d1 = 0.95f * D[j * d.V + v];
      if (j % 4 == 0) d1 += 0.05f * u[j / 4];
      if (has_ef) {
        float mod = d1;
        if (j < 4) mod = 0.9f * d1 + 0.1f * (1.f - 0.5f * mE);
        else if (j < 8) mod = 0.9f * d1 + 0.1f * (0.2f * mE - 0.1f);
        else if (j >= 12) mod = 0.9f * d1 + 0.1f * sigmoidf_(2.f * mE - 0.5f);
        d1 = (1.f - wE) * d1 + wE * mod;
      }
      fn[(b * 64 + 48 + j) * d.V + v] = fminf(5.f, fmaxf(-5.f, repair(d1)));
    }
  }
  warp_max_into(stats, b, local_max);
}

// The squash and the periodic diffusion at (x, y, z) of one channel.
__device__ __forceinline__ float diffused(const float* ch, const Dims& d, int x, int y, int z,
                                          bool squash) {
  auto val = [&](int xx, int yy, int zz) {
    const int R = d.R;
    const float f = ch[(split::periodic_wrap(xx, R) * R + split::periodic_wrap(yy, R)) * R +
                       split::periodic_wrap(zz, R)];
    return squash ? tanhf(f) : f;
  };
  const float c0 = val(x, y, z);
  const float lap = ((val(x - 1, y, z) + val(x + 1, y, z)) - 2.f * c0) +
                    ((val(x, y - 1, z) + val(x, y + 1, z)) - 2.f * c0) +
                    ((val(x, y, z - 1) + val(x, y, z + 1)) - 2.f * c0);
  return c0 + 0.025f * lap;
}

// Grid (voxel blocks, channel, robot), so no 64-bit division per element, and the periodic wrap
// by comparison (split::periodic_wrap) instead of a modulo by the run-time R.
__global__ void diffuse_kernel(const float* fn, const float* stats, float* out, Dims d) {
  const int c = blockIdx.y;
  const int64_t b = blockIdx.z;
  const int v = static_cast<int>(blockIdx.x) * kThreads + threadIdx.x;
  if (v >= d.V) return;
  const auto [x, y, z] = voxel_of(v, d);
  const bool squash = c < 48 && stats[b * 4 + 2] > 2.f;
  const int64_t base = (b * 64 + c) * d.V;
  out[base + v] = diffused(fn + base, d, x, y, z, squash);
}

unsigned blocks_for(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

}  // namespace

size_t field_step_workspace_floats(int64_t batch, int64_t resolution) {
  const int64_t V = resolution * resolution * resolution;
  // + the statistics of Ef's per-robot partials (split_reduction_kernel.cu).
  return static_cast<size_t>(batch * V * (64 + 48 + 48) + batch * 4 + batch * split::kEfPartialFloats);
}

int launch(const FieldStepArrays& a, void* stream_ptr) {
  if (a.batch == 0 || a.resolution == 0) return 0;
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  Dims d;
  d.B = a.batch;
  d.R = static_cast<int>(a.resolution);  // <= 1024 (checked by the caller)
  d.P = d.R * d.R;
  d.V = static_cast<int64_t>(d.P) * d.R;
  float* fn = a.workspace;                   // [B,64,V]; X2 lives in its first 48 channels' space
  float* x2 = fn;                            // [B,48,V] packed (consumed before fn is written)
  float* x3 = fn + d.B * 64 * d.V;           // [B,48,V]
  float* aq = x3 + d.B * 48 * d.V;           // [B,48,V]
  float* stats = aq + d.B * 48 * d.V;        // [B,4]
  float* partials = stats + d.B * 4;         // [B, split::kEfPartialFloats]
  if (d.B > 65535) return static_cast<int>(cudaErrorInvalidConfiguration);  // grid.y / grid.z
  const int err = launch_ef_stats(a.ef, stats, partials, d.B, a.resolution, stream);
  if (err != 0) return err;
  const int64_t philox_blocks = (48 * d.V + 3) / 4;  // per robot
  x2_kernel<<<dim3(blocks_for(philox_blocks), static_cast<unsigned>(d.B)), kThreads, 0, stream>>>(
      a.field, a.noise, a.noise_key, a.wave, a.scalars, x2, d);
  x3_kernel<<<blocks_for(d.B * 48 * d.V), kThreads, 0, stream>>>(a.field, x2, x3, aq, d);
  x4_coupling_kernel<<<blocks_for(d.B * 48 * d.V), kThreads, 0, stream>>>(a.field, x3, aq, fn, d);
  x4_stats_kernel<<<blocks_for(d.B * d.V), kThreads, 0, stream>>>(a.field, a.ef, a.scalars, x3, fn,
                                                                  stats, d);
  const dim3 grid(blocks_for(d.V), 64, static_cast<unsigned>(d.B));
  diffuse_kernel<<<grid, kThreads, 0, stream>>>(fn, stats, a.out, d);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
