// Vector helpers shared by the per-instruction-set pass files (field_step_passes.cpp,
// field_readout_passes.cpp): at::vec's float vector of this build's width, and loops over a row
// in vector-sized pieces with a masked tail. Included only by files compiled per ISA.
#pragma once

#include <ATen/cpu/vec/vec.h>

#include <cstdint>

#ifndef FIELDBRAIN_ISA_NAMESPACE
#error "compile with -DFIELDBRAIN_ISA_NAMESPACE=isa_<name>"
#endif

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace FIELDBRAIN_ISA_NAMESPACE {
namespace pieces {

using Vec = at::vec::Vectorized<float>;
constexpr int64_t kW = Vec::size();

// Runs fn(i, n) over [0, len) in vector-sized pieces; n < kW only for the tail.
template <typename Fn>
inline void for_vectors(int64_t len, Fn fn) {
  int64_t i = 0;
  for (; i + kW <= len; i += kW) fn(i, kW);
  if (i < len) fn(i, len - i);
}
// A partial load fills the missing lanes with 0 (which adds nothing to a sum or a max |.|).
inline Vec load(const float* p, int64_t n) { return n == kW ? Vec::loadu(p) : Vec::loadu(p, n); }
inline void store(const Vec& v, float* p, int64_t n) {
  if (n == kW) {
    v.store(p);
  } else {
    v.store(p, n);
  }
}

}  // namespace pieces
}  // namespace FIELDBRAIN_ISA_NAMESPACE
}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
