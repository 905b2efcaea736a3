// CUDA kernel of fieldbrain::spontaneous_wave_out (brain/ops/spontaneous_wave.h), raw CUDA C++
// without LibTorch headers (see cuda/launchers.h). One thread per voxel (z fastest, so a
// warp's stores are coalesced), grid.y = robot; the robot's 5 wave vectors and mask are read
// through the read-only cache. Index math is 32-bit inside a robot's R^3 voxels (R <= 1024 is
// checked by the caller, so R^3 < 2^31); only the robot's base offset is 64-bit.
#include <cuda_runtime.h>

#include "brain/ops/cuda/launchers.h"
#include "brain/ops/spontaneous_wave_math.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

constexpr int kWaveThreads = 256;

__global__ void spontaneous_wave_kernel(const float* __restrict__ wave_vectors,
                                        const float* __restrict__ wave_mask,
                                        const float* __restrict__ phase, int64_t phase_stride,
                                        float* __restrict__ wave, int R) {
  const int b = blockIdx.y;
  const int V = R * R * R;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= V) return;
  const int x = i / (R * R), y = (i / R) % R, z = i % R;
  const float* wv = wave_vectors + b * (wave::kMaxWaves * 3);
  const float* mask = wave_mask + b * wave::kMaxWaves;
  const float ph = __ldg(phase + static_cast<int64_t>(b) * phase_stride);
  wave[static_cast<int64_t>(b) * V + i] = wave::wave_at(wv, mask, ph, x, y, z);
}

}  // namespace

int launch(const SpontaneousWaveArgs& a, void* stream) {
  if (a.batch == 0 || a.resolution == 0) return 0;
  const int R = static_cast<int>(a.resolution);
  const int V = R * R * R;
  const dim3 grid((V + kWaveThreads - 1) / kWaveThreads, static_cast<unsigned>(a.batch));
  spontaneous_wave_kernel<<<grid, kWaveThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      a.wave_vectors, a.wave_mask, a.phase, a.phase_stride, a.wave, R);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
