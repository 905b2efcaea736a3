// Which CUDA kernels the launchers use, chosen once per process by the environment variable
// FIELDBRAIN_KERNELS (docs/gpu.md "Kernel sets"):
//   v1 (default, or unset): the kernels measured first, one block per robot for the field step's
//      statistics of Ef and for the error field;
//   v2: brain/ops/cuda/split_reduction_kernel.cu, which spread a robot's reduction over many
//      blocks (brain/ops/split_reduction_math.h).
// Read at the first launch that asks (before any CUDA graph is recorded: the brain's first
// cycles run eagerly) and never again, so one process never mixes the two. Any other value is
// reported once on stderr and v1 is used. Plain C++ (no CUDA, no LibTorch): the .cu files
// include it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace fieldbrain {
namespace ops {
namespace cuda {

enum class KernelSet { v1, v2 };

inline KernelSet kernel_set_from(const char* value) {
  if (value == nullptr || *value == '\0' || std::strcmp(value, "v1") == 0) return KernelSet::v1;
  if (std::strcmp(value, "v2") == 0) return KernelSet::v2;
  std::fprintf(stderr, "fieldbrain: FIELDBRAIN_KERNELS=%s is neither v1 nor v2; using v1\n", value);
  return KernelSet::v1;
}

inline KernelSet kernel_set() {
  static const KernelSet chosen = kernel_set_from(std::getenv("FIELDBRAIN_KERNELS"));
  return chosen;
}

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
