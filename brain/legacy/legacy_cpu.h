// Whether this CPU runs the legacy profile's stencils and fused loops: field_stencils.cpp,
// field_loops.cpp and aten_sums.cpp are built for AVX2 + FMA (function by function: the
// stencils reproduce the FMA chains of the original's oneDNN convolution, the fused loops and
// sums run their lanes as AVX2 vectors), so on a CPU without them the process would stop with
// SIGILL. The config refuses the profile there instead, at start-up, naming the key. (Named for
// the stencils, it covers every AVX2/FMA function of brain/legacy/.)
#pragma once

namespace fieldbrain::legacy {

inline bool cpu_runs_legacy_stencils() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

}  // namespace fieldbrain::legacy
