// exact_tanh_simd.h's tanh8, sixteen lanes at a time: the same operations in the same order,
// each an IEEE lanewise operation (add, subtract, multiply, fused multiply-add, divide, the
// round-to-nearest conversion, shifts, compares, selects), so every lane's float is tanh8's.
// Why: the tanh is a long chain of dependent operations (two divisions among them); a 512-bit
// instruction carries twice the lanes through the same out-of-order window. The caller checks
// the CPU (avx512f) before calling; test/legacy/exact_tanh_wide_test.cpp holds it against
// tanh8 bit for bit.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include "brain/legacy/exact_tanh_simd.h"

namespace fieldbrain::legacy::exact_tanh_wide_detail {

#define FIELDBRAIN_LEGACY_TANH16_INLINE __attribute__((target("avx512f"), always_inline)) inline

struct Pair {  // a double-float: x + y
  __m512 x, y;
};

// Every lane. The operations that have one are written in their zero-masking form with every
// lane set (the same instruction): GCC 12's unmasked forms start from an "undefined" vector
// that -Wmaybe-uninitialized reports once inlined.
constexpr __mmask16 kAll = 0xFFFF;

FIELDBRAIN_LEGACY_TANH16_INLINE __m512 splat(float v) { return _mm512_set1_ps(v); }
FIELDBRAIN_LEGACY_TANH16_INLINE __m512 bit_xor(__m512 a, __m512 b) {
  return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
FIELDBRAIN_LEGACY_TANH16_INLINE __m512 bit_and(__m512 a, __m512 b) {
  return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
FIELDBRAIN_LEGACY_TANH16_INLINE __m512 bit_andnot(__m512 a, __m512 b) {  // ~a & b
  return _mm512_castsi512_ps(
      _mm512_maskz_andnot_epi32(kAll, _mm512_castps_si512(a), _mm512_castps_si512(b)));
}

FIELDBRAIN_LEGACY_TANH16_INLINE Pair sum(Pair a, Pair b) {
  const __m512 s = _mm512_add_ps(a.x, b.x), v = _mm512_sub_ps(s, a.x);
  const __m512 t = _mm512_add_ps(_mm512_sub_ps(a.x, _mm512_sub_ps(s, v)), _mm512_sub_ps(b.x, v));
  return {s, _mm512_add_ps(_mm512_add_ps(t, a.y), b.y)};
}
FIELDBRAIN_LEGACY_TANH16_INLINE Pair sum(Pair a, __m512 b) {
  const __m512 s = _mm512_add_ps(a.x, b), v = _mm512_sub_ps(s, a.x);
  const __m512 t = _mm512_add_ps(_mm512_sub_ps(a.x, _mm512_sub_ps(s, v)), _mm512_sub_ps(b, v));
  return {s, _mm512_add_ps(t, a.y)};
}
FIELDBRAIN_LEGACY_TANH16_INLINE Pair sum_larger_first(__m512 a, Pair b) {
  const __m512 s = _mm512_add_ps(a, b.x);
  return {s, _mm512_add_ps(_mm512_add_ps(_mm512_sub_ps(a, s), b.x), b.y)};
}
FIELDBRAIN_LEGACY_TANH16_INLINE Pair product(Pair a, __m512 b) {
  const __m512 s = _mm512_mul_ps(a.x, b);
  return {s, _mm512_fmadd_ps(a.y, b, _mm512_fmsub_ps(a.x, b, s))};
}
FIELDBRAIN_LEGACY_TANH16_INLINE Pair product(Pair a, Pair b) {
  const __m512 s = _mm512_mul_ps(a.x, b.x);
  return {s, _mm512_fmadd_ps(a.x, b.y, _mm512_fmadd_ps(a.y, b.x, _mm512_fmsub_ps(a.x, b.x, s)))};
}
FIELDBRAIN_LEGACY_TANH16_INLINE Pair square(Pair a) {
  const __m512 s = _mm512_mul_ps(a.x, a.x);
  return {s, _mm512_fmadd_ps(_mm512_add_ps(a.x, a.x), a.y, _mm512_fmsub_ps(a.x, a.x, s))};
}
FIELDBRAIN_LEGACY_TANH16_INLINE Pair reciprocal(Pair d) {
  const __m512 one = splat(1.0f);
  const __m512 s = _mm512_div_ps(one, d.x);
  return {s, _mm512_mul_ps(s, _mm512_fnmadd_ps(d.y, s, _mm512_fnmadd_ps(d.x, s, one)))};
}
FIELDBRAIN_LEGACY_TANH16_INLINE Pair quotient(Pair n, Pair d) {
  const __m512 one = splat(1.0f);
  const __m512 t = _mm512_div_ps(one, d.x);
  const __m512 s = _mm512_mul_ps(n.x, t);
  const __m512 u = _mm512_fmsub_ps(t, n.x, s);
  const __m512 v = _mm512_fnmadd_ps(d.y, t, _mm512_fnmadd_ps(d.x, t, one));
  return {s, _mm512_fmadd_ps(s, v, _mm512_fmadd_ps(n.y, t, u))};
}
FIELDBRAIN_LEGACY_TANH16_INLINE __m512 pow2(__m512i e) {
  return _mm512_castsi512_ps(
      _mm512_maskz_slli_epi32(kAll, _mm512_add_epi32(e, _mm512_set1_epi32(0x7f)), 23));
}
FIELDBRAIN_LEGACY_TANH16_INLINE __m512 scaled(__m512 x, __m512i q) {
  const __m512i half = _mm512_maskz_srai_epi32(kAll, q, 1);
  return _mm512_mul_ps(_mm512_mul_ps(x, pow2(half)), pow2(_mm512_sub_epi32(q, half)));
}
FIELDBRAIN_LEGACY_TANH16_INLINE Pair exp_reduced(Pair s) {
  __m512 u = splat(0.1980960224e-3f);
  u = _mm512_fmadd_ps(u, s.x, splat(0.1394256484e-2f));
  u = _mm512_fmadd_ps(u, s.x, splat(0.8333456703e-2f));
  u = _mm512_fmadd_ps(u, s.x, splat(0.4166637361e-1f));
  Pair t = sum(product(s, u), splat(0.166666659414234244790680580464f));
  t = sum(product(s, t), splat(0.5f));
  t = sum(s, product(square(s), t));
  return sum_larger_first(splat(1.0f), t);
}
FIELDBRAIN_LEGACY_TANH16_INLINE Pair exp_pair(__m512 a) {
  const __m512 u0 = _mm512_mul_ps(a, splat(1.442695040888963407359924681001892137426645954f));
  const __m512i q =
      _mm512_maskz_cvtps_epi32(kAll, u0);  // round to nearest, even (the current mode)
  const __m512 qf = _mm512_maskz_cvtepi32_ps(kAll, q);
  Pair s = sum(Pair{a, _mm512_setzero_ps()}, _mm512_mul_ps(qf, splat(-0.693145751953125f)));
  s = sum(s, _mm512_mul_ps(qf, splat(-1.428606765330187045e-06f)));
  const Pair t = exp_reduced(s);
  return {scaled(t.x, q), scaled(t.y, q)};
}
FIELDBRAIN_LEGACY_TANH16_INLINE Pair exp_pair_small(__m512 a) {
  return exp_reduced(Pair{a, _mm512_setzero_ps()});
}

FIELDBRAIN_LEGACY_TANH16_INLINE __m512 tanh16_sleef(__m512 x) {
  const __m512 sign = splat(-0.0f);
  const __m512 a = bit_andnot(sign, x);
  // (a NaN fails the comparison: the whole path, as in tanh8)
  const bool small = _mm512_cmp_ps_mask(a, splat(0.34f), _CMP_LT_OQ) == 0xFFFF;
  const Pair e = small ? exp_pair_small(a) : exp_pair(a);
  const Pair r = reciprocal(e);
  const Pair minus_r{bit_xor(r.x, sign), bit_xor(r.y, sign)};
  const Pair q = quotient(sum(e, minus_r), sum(e, r));
  __m512 y = _mm512_add_ps(q.x, q.y);
  const __mmask16 one = _mm512_cmp_ps_mask(a, splat(8.664339742f), _CMP_GT_OQ) |
                        _mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q);
  y = _mm512_mask_blend_ps(one, y, splat(1.0f));
  y = bit_xor(y, bit_and(sign, x));  // x's sign
  // NaN in, NaN out (tanh8 ORs all-ones bits into a NaN lane)
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_mask_blend_ps(nan, y, _mm512_castsi512_ps(_mm512_set1_epi32(-1)));
}

// exact_tanh_simd.h's near_zero8, sixteen lanes (the same operations, the same constants)
FIELDBRAIN_LEGACY_TANH16_INLINE bool near_zero16(__m512 x, __m512& y) {
  using K = exact_tanh_detail::NearZero;
  const __m512 sign = splat(-0.0f);
  const __m512 a = bit_andnot(sign, x);
  const __m512 z = _mm512_mul_ps(a, a);
  __m512 p = _mm512_fmadd_ps(splat(K::kP4), z, splat(K::kP3));
  p = _mm512_fmadd_ps(p, z, splat(K::kP2));
  p = _mm512_fmadd_ps(p, z, splat(K::kP1));
  p = _mm512_fmadd_ps(p, z, splat(K::kP0));
  const __m512 c = _mm512_mul_ps(_mm512_mul_ps(a, z), p);
  const __m512 r = _mm512_add_ps(a, c);
  const __m512 e = _mm512_sub_ps(c, _mm512_sub_ps(r, a));
  const __m512 m = _mm512_fmadd_ps(r, _mm512_fmadd_ps(z, splat(K::kSquared), splat(K::kRelative)),
                                   splat(K::kAbsolute));
  const __m512 up = _mm512_add_ps(r, _mm512_add_ps(e, m));
  const __m512 down = _mm512_add_ps(r, _mm512_sub_ps(e, m));
  const __mmask16 clear =
      _mm512_cmp_ps_mask(up, r, _CMP_EQ_OQ) & _mm512_cmp_ps_mask(down, r, _CMP_EQ_OQ);
  const __mmask16 taken = _mm512_cmp_ps_mask(a, splat(K::kBound), _CMP_LT_OQ) &
                          (clear | _mm512_cmp_ps_mask(a, splat(K::kIdentity), _CMP_LT_OQ));
  y = bit_xor(r, bit_and(sign, x));
  return taken == 0xFFFF;
}

FIELDBRAIN_LEGACY_TANH16_INLINE __m512 tanh16(__m512 x) {
  __m512 y;
  return near_zero16(x, y) ? y : tanh16_sleef(x);
}

}  // namespace fieldbrain::legacy::exact_tanh_wide_detail

#endif
