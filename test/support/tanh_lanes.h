// The legacy exact tanh's vector walks as the tests call them (brain/legacy/exact_tanh_simd.h,
// exact_tanh_avx512.h): n values in place, eight or sixteen lanes at a time, and float <-> bits.
// Shared by test/legacy/exact_tanh_wide_test.cpp and exact_tanh_near_zero_test.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "brain/legacy/exact_tanh_avx512.h"
#include "brain/legacy/exact_tanh_simd.h"

namespace fieldbrain::test {

#if defined(__x86_64__) && defined(__GNUC__)
// n (a multiple of 8) values through tanh8, eight at a time
__attribute__((target("avx2,fma"))) inline void tanh_eight_lanes(float* x, size_t n) {
  for (size_t i = 0; i < n; i += 8)
    _mm256_storeu_ps(x + i, legacy::exact_tanh_detail::tanh8(_mm256_loadu_ps(x + i)));
}

// n (a multiple of 16) values through tanh16, sixteen at a time
__attribute__((target("avx512f"))) inline void tanh_sixteen_lanes(float* x, size_t n) {
  for (size_t i = 0; i < n; i += 16)
    _mm512_storeu_ps(x + i, legacy::exact_tanh_wide_detail::tanh16(_mm512_loadu_ps(x + i)));
}
#endif

inline float float_from_bits(uint32_t b) {
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

inline uint32_t bits_of_float(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

}  // namespace fieldbrain::test
