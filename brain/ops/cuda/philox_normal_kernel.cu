// CUDA fill of a Philox normal stream (cuda/launchers.h): one thread per Philox block
// (four consecutive elements), the numbers of brain/ops/philox.h bit for bit (its device path
// uses the __f*_rn intrinsics, which nvcc never contracts). 32-bit index math within a robot.
#include "brain/ops/cuda/launchers.h"

#include <cuda_runtime.h>

#include "brain/ops/philox.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

constexpr int kThreads = 256;

__global__ void philox_normal_kernel(const int64_t* key, uint32_t stream, int64_t per_robot,
                                     uint32_t blocks_per_robot, float* out) {
  const uint32_t block = blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t b = blockIdx.y;
  if (block >= blocks_per_robot) return;
  const uint64_t seed = static_cast<uint64_t>(key[2 * b]);
  const uint64_t cycle = static_cast<uint64_t>(key[2 * b + 1]);
  float z[4];
  philox::normal4(seed, cycle, stream, block, z);
  float* dst = out + b * per_robot;
  const int64_t first = static_cast<int64_t>(block) * 4;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if (first + j < per_robot) dst[first + j] = z[j];
  }
}

}  // namespace

int launch(const PhiloxNormalArgs& a, void* stream_ptr) {
  const int64_t* key = a.key;
  const uint32_t stream = a.stream;
  const int64_t batch = a.batch, per_robot = a.per_robot;
  float* out = a.out;
  if (batch == 0 || per_robot == 0) return 0;
  const uint32_t blocks = static_cast<uint32_t>((per_robot + 3) / 4);
  const dim3 grid((blocks + kThreads - 1) / kThreads, static_cast<unsigned>(batch));
  philox_normal_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream_ptr)>>>(
      key, stream, per_robot, blocks, out);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
