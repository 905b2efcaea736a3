// Which instruction-set variant of the per-ISA compiled passes (field_step_passes.cpp,
// field_readout_passes.cpp, philox_fill.cpp) this CPU runs: the widest it supports, capped by
// FIELDBRAIN_ISA=default|avx2|avx512. One rule for every kernel, decided once per process.
#pragma once

#include <vector>

namespace fieldbrain {
namespace ops {
namespace cpu {

enum class CpuIsa { kDefault, kAvx2, kAvx512 };

CpuIsa chosen_cpu_isa();
// Every variant this CPU can run (tests compare them), narrowest first.
std::vector<CpuIsa> runnable_cpu_isas();

// The table of the chosen variant among the three a pass file defines (without the AVX2 and
// AVX-512 builds, callers pass the default table three times).
template <class Table>
const Table& table_for(CpuIsa isa, const Table& portable, const Table& avx2, const Table& avx512) {
  switch (isa) {
    case CpuIsa::kAvx512: return avx512;
    case CpuIsa::kAvx2: return avx2;
    default: return portable;
  }
}

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
