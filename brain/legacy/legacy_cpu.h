// Whether this CPU runs the legacy profile's stencils: field_stencils.cpp is
// built for AVX2 + FMA (function by function, to reproduce the FMA chains of the original's
// oneDNN convolution), so on a CPU without them it would stop the process with SIGILL. The
// config refuses the profile there instead, at start-up, naming the key.
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
