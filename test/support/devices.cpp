#include "test/support/devices.h"

#ifdef FIELDBRAIN_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace fieldbrain::test {

int64_t cuda_reserved_bytes() {
#ifdef FIELDBRAIN_WITH_CUDA
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device());
  // Index 0 is StatType::AGGREGATE (all pools); the enum's namespace moved between LibTorch
  // 1.13 and 2.x, its order did not.
  return stats.reserved_bytes[0].current;
#else
  return -1;
#endif
}

}  // namespace fieldbrain::test
