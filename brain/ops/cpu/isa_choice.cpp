#include "brain/ops/cpu/isa_choice.h"

#include <cstdlib>
#include <string>

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace {

// FIELDBRAIN_OPS_AVX2 / FIELDBRAIN_OPS_AVX512: the variants were built (x86-64 with Sleef).
bool cpu_has_avx2() {
#if defined(FIELDBRAIN_OPS_AVX2)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool cpu_has_avx512() {
#if defined(FIELDBRAIN_OPS_AVX512)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

}  // namespace

CpuIsa chosen_cpu_isa() {
  static const CpuIsa chosen = [] {
    const char* env = std::getenv("FIELDBRAIN_ISA");
    const std::string cap = env != nullptr ? env : "";
    if ((cap.empty() || cap == "avx512") && cpu_has_avx512()) return CpuIsa::kAvx512;
    if (cap != "default" && cpu_has_avx2()) return CpuIsa::kAvx2;
    return CpuIsa::kDefault;
  }();
  return chosen;
}

std::vector<CpuIsa> runnable_cpu_isas() {
  std::vector<CpuIsa> out{CpuIsa::kDefault};
  if (cpu_has_avx2()) out.push_back(CpuIsa::kAvx2);
  if (cpu_has_avx512()) out.push_back(CpuIsa::kAvx512);
  return out;
}

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
