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
// The tails are masked loads and stores where the ISA has them: at::vec's partial loadu and
// store (LibTorch 1.13) go through a stack buffer and memcpy, which made every row of a
// resolution that is not a multiple of the vector width (R = 12, 20, 24 with AVX-512) cost
// more than the whole rows of R = 32. The same lanes either way.
#if defined(CPU_CAPABILITY_AVX512)
inline __mmask16 tail_mask(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
inline Vec load(const float* p, int64_t n) {
  return n == kW ? Vec::loadu(p) : Vec(_mm512_maskz_loadu_ps(tail_mask(n), p));
}
inline void store(const Vec& v, float* p, int64_t n) {
  if (n == kW) {
    v.store(p);
  } else {
    _mm512_mask_storeu_ps(p, tail_mask(n), v);
  }
}
#elif defined(CPU_CAPABILITY_AVX2)
inline __m256i tail_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline Vec load(const float* p, int64_t n) {
  return n == kW ? Vec::loadu(p) : Vec(_mm256_maskload_ps(p, tail_mask(n)));
}
inline void store(const Vec& v, float* p, int64_t n) {
  if (n == kW) {
    v.store(p);
  } else {
    _mm256_maskstore_ps(p, tail_mask(n), v);
  }
}
#else
inline Vec load(const float* p, int64_t n) { return n == kW ? Vec::loadu(p) : Vec::loadu(p, n); }
inline void store(const Vec& v, float* p, int64_t n) {
  if (n == kW) {
    v.store(p);
  } else {
    v.store(p, n);
  }
}
#endif

}  // namespace pieces
}  // namespace FIELDBRAIN_ISA_NAMESPACE
}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
