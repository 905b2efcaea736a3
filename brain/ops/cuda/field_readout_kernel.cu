// CUDA kernels of the fused read-out (brain/ops/field_readout.h), raw CUDA C++ without LibTorch
// headers (see cuda/launchers.h). Two launches, stream-ordered, no host sync, no atomics:
//   1. one block per (robot, channel): each warp reduces whole cells (lanes stride over the
//      cell's voxels, z fastest, then a warp shuffle); then the block streams the channel once
//      more (coalesced; the channel is L2-resident by then) for its sum, |.| sum, square sum,
//      max |.| and face sums, reduced per warp by shuffles and across warps in shared memory.
//   2. one block per robot: the cell activity (one thread per cell) and the summary.
// Index math is 32-bit inside a channel (R <= 128 gives at most 2^21 voxels); only the
// channel's base offset is 64-bit.
#include <cuda_runtime.h>

#include "brain/ops/cuda/launchers.h"
#include "brain/ops/field_readout_layout.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

constexpr int kReadoutThreads = 256;
constexpr int kWarps = kReadoutThreads / 32;
constexpr int kChannelStats = 10;  // sum, |.| sum, square sum, max |.|, 6 face sums

__device__ __forceinline__ int cell_lo(int i, int R) { return (i * R) / 4; }
__device__ __forceinline__ int cell_hi(int i, int R) { return ((i + 1) * R + 3) / 4; }

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

__global__ void readout_channel_kernel(const float* field, float* out, int R) {
  const int b = blockIdx.x / kReadoutChannels, c = blockIdx.x % kReadoutChannels;
  const int P = R * R, V = P * R;
  const float* ch = field + static_cast<int64_t>(blockIdx.x) * V;
  float* row = out + static_cast<int64_t>(b) * kReadoutWidth;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;

  for (int cell = warp; cell < kReadoutCells; cell += kWarps) {
    const int xi = cell / 16, yj = (cell / 4) % 4, zk = cell % 4;
    const int lx = cell_lo(xi, R), ly = cell_lo(yj, R), lz = cell_lo(zk, R);
    const int ex = cell_hi(xi, R) - lx, ey = cell_hi(yj, R) - ly, ez = cell_hi(zk, R) - lz;
    const int n = ex * ey * ez;
    float s = 0.f, a = 0.f;
    for (int e = lane; e < n; e += 32) {
      const int dz = e % ez, t = e / ez, dy = t % ey, dx = t / ey;
      const float v = ch[((lx + dx) * R + ly + dy) * R + lz + dz];
      s += v;
      a += fabsf(v);
    }
    s = warp_sum(s);
    a = warp_sum(a);
    if (lane == 0) {
      row[kReadoutCellMean + c * kReadoutCells + cell] = s / static_cast<float>(n);
      row[kReadoutCellAbsMean + c * kReadoutCells + cell] = a / static_cast<float>(n);
    }
  }

  float acc[kChannelStats] = {};
  for (int i = threadIdx.x; i < V; i += kReadoutThreads) {
    const float v = ch[i], a = fabsf(v);
    const int z = i % R, y = (i / R) % R, x = i / P;
    acc[0] += v;
    acc[1] += a;
    acc[2] += v * v;
    acc[3] = fmaxf(acc[3], a);
    if (x == 0) acc[4] += v;
    if (x == R - 1) acc[5] += v;
    if (y == 0) acc[6] += v;
    if (y == R - 1) acc[7] += v;
    if (z == 0) acc[8] += v;
    if (z == R - 1) acc[9] += v;
  }
  __shared__ float partial[kWarps][kChannelStats];
  for (int k = 0; k < kChannelStats; ++k) {
    const float r = k == 3 ? warp_max(acc[k]) : warp_sum(acc[k]);
    if (lane == 0) partial[warp][k] = r;
  }
  __syncthreads();
  if (threadIdx.x < kChannelStats) {
    const int k = threadIdx.x;
    double r = 0.0;
    for (int w = 0; w < kWarps; ++w) {
      const double p = partial[w][k];
      r = k == 3 ? fmax(r, p) : r + p;
    }
    const double volume = static_cast<double>(V), face = static_cast<double>(P);
    if (k == 0) row[kReadoutChannelMean + c] = static_cast<float>(r / volume);
    if (k == 1) row[kReadoutChannelAbsMean + c] = static_cast<float>(r / volume);
    if (k == 2) row[kReadoutChannelSqMean + c] = static_cast<float>(r / volume);
    if (k == 3) row[kReadoutChannelMaxAbs + c] = static_cast<float>(r);
    if (k >= 4) row[kReadoutFaceMean + c * kReadoutFaces + (k - 4)] = static_cast<float>(r / face);
  }
}

__device__ double mean_of(const float* p, int count) {
  double s = 0.0;
  for (int i = 0; i < count; ++i) s += p[i];
  return s / count;
}
__device__ double face_mean(const float* row, int face) {
  double s = 0.0;
  for (int c = 0; c < 32; ++c) s += row[kReadoutFaceMean + c * kReadoutFaces + face];
  return s / 32.0;
}

// One block of kReadoutCells threads per robot.
__global__ void readout_finish_kernel(float* out, int R) {
  float* row = out + static_cast<int64_t>(blockIdx.x) * kReadoutWidth;
  const int cell = threadIdx.x;
  double s = 0.0;
  for (int c = 0; c < kReadoutChannels; ++c)
    s += row[kReadoutCellAbsMean + c * kReadoutCells + cell];
  row[kReadoutCellActivity + cell] = static_cast<float>(s / kReadoutChannels);
  if (cell != 0) return;
  float max_abs = 0.f;
  for (int c = 0; c < kReadoutChannels; ++c)
    max_abs = fmaxf(max_abs, row[kReadoutChannelMaxAbs + c]);
  const double n = 48.0 * R * R * R;
  const double mean = mean_of(row + kReadoutChannelMean, 48);
  const double square = mean_of(row + kReadoutChannelSqMean, 48);
  float* summary = row + kReadoutSummary;
  summary[kSummaryAbsMean] = static_cast<float>(mean_of(row + kReadoutChannelAbsMean, 64));
  summary[kSummaryMaxAbs] = max_abs;
  summary[kSummaryContentAbsMean] = static_cast<float>(mean_of(row + kReadoutChannelAbsMean, 32));
  summary[kSummaryActivityAbsMean] = static_cast<float>(mean_of(row + kReadoutChannelAbsMean, 48));
  summary[kSummaryActivityVar] = static_cast<float>((square - mean * mean) * n / (n - 1.0));
  summary[kSummaryGradientX] = static_cast<float>(face_mean(row, 1) - face_mean(row, 0));
  summary[kSummaryGradientY] = static_cast<float>(face_mean(row, 3) - face_mean(row, 2));
  summary[kSummaryGradientZ] = static_cast<float>(face_mean(row, 5) - face_mean(row, 4));
}

}  // namespace

int launch(const FieldReadoutArgs& a, void* stream_ptr) {
  if (a.batch == 0) return 0;
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const int R = static_cast<int>(a.resolution);
  readout_channel_kernel<<<static_cast<unsigned>(a.batch * kReadoutChannels), kReadoutThreads, 0,
                           stream>>>(a.field, a.out, R);
  readout_finish_kernel<<<static_cast<unsigned>(a.batch), kReadoutCells, 0, stream>>>(a.out, R);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
