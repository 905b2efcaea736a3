// tanh of 8 floats as LibTorch's vectorised tanh gives them on AVX2 and AVX-512 (ATen calls
// Sleef's tanhf u10 there; its AVX2 and AVX-512 builds give the same float for every input,
// checked over all 2^32 bit patterns), written here from the published algorithm so the fused
// walks over the legacy field can take the tanh where they make its argument (no extra walk,
// no ATen call):
//   tanh|x| = (e - 1/e) / (e + 1/e), e = exp|x| as a double-float (a pair of floats: value
//   and error), with the double-float sum, product, square, reciprocal and quotient made with
//   fused multiply-adds; exp|x| = 2^q exp(s), q = rint(|x| / ln 2), s = |x| - q ln 2 in two
//   parts, exp(s) by a degree-7 polynomial whose three highest terms are plain floats;
//   |x| > 8.664339742 (and a NaN quotient) gives 1; the sign is x's; a NaN stays NaN.
// Each operation and its order matter: one addition associated otherwise changes 2 of the
// 2^32 results. The header only; exact_tanh.h decides whether it may be used (the probe).
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

namespace fieldbrain::legacy::exact_tanh_detail {

#define FIELDBRAIN_LEGACY_TANH_INLINE __attribute__((target("avx2,fma"), always_inline)) inline

struct Pair {  // a double-float: x + y, |y| <= ulp(x) / 2
  __m256 x, y;
};

FIELDBRAIN_LEGACY_TANH_INLINE __m256 splat(float v) { return _mm256_set1_ps(v); }

// (a, b) + (c, d), normalised whatever their magnitudes
FIELDBRAIN_LEGACY_TANH_INLINE Pair sum(Pair a, Pair b) {
  const __m256 s = _mm256_add_ps(a.x, b.x), v = _mm256_sub_ps(s, a.x);
  const __m256 t = _mm256_add_ps(_mm256_sub_ps(a.x, _mm256_sub_ps(s, v)), _mm256_sub_ps(b.x, v));
  return {s, _mm256_add_ps(_mm256_add_ps(t, a.y), b.y)};
}
// (a, b) + c
FIELDBRAIN_LEGACY_TANH_INLINE Pair sum(Pair a, __m256 b) {
  const __m256 s = _mm256_add_ps(a.x, b), v = _mm256_sub_ps(s, a.x);
  const __m256 t = _mm256_add_ps(_mm256_sub_ps(a.x, _mm256_sub_ps(s, v)), _mm256_sub_ps(b, v));
  return {s, _mm256_add_ps(t, a.y)};
}
// a + (c, d) with |a| >= |c|
FIELDBRAIN_LEGACY_TANH_INLINE Pair sum_larger_first(__m256 a, Pair b) {
  const __m256 s = _mm256_add_ps(a, b.x);
  return {s, _mm256_add_ps(_mm256_add_ps(_mm256_sub_ps(a, s), b.x), b.y)};
}
FIELDBRAIN_LEGACY_TANH_INLINE Pair product(Pair a, __m256 b) {
  const __m256 s = _mm256_mul_ps(a.x, b);
  return {s, _mm256_fmadd_ps(a.y, b, _mm256_fmsub_ps(a.x, b, s))};
}
FIELDBRAIN_LEGACY_TANH_INLINE Pair product(Pair a, Pair b) {
  const __m256 s = _mm256_mul_ps(a.x, b.x);
  return {s, _mm256_fmadd_ps(a.x, b.y, _mm256_fmadd_ps(a.y, b.x, _mm256_fmsub_ps(a.x, b.x, s)))};
}
FIELDBRAIN_LEGACY_TANH_INLINE Pair square(Pair a) {
  const __m256 s = _mm256_mul_ps(a.x, a.x);
  return {s, _mm256_fmadd_ps(_mm256_add_ps(a.x, a.x), a.y, _mm256_fmsub_ps(a.x, a.x, s))};
}
FIELDBRAIN_LEGACY_TANH_INLINE Pair reciprocal(Pair d) {
  const __m256 one = splat(1.0f);
  const __m256 s = _mm256_div_ps(one, d.x);
  return {s, _mm256_mul_ps(s, _mm256_fnmadd_ps(d.y, s, _mm256_fnmadd_ps(d.x, s, one)))};
}
FIELDBRAIN_LEGACY_TANH_INLINE Pair quotient(Pair n, Pair d) {
  const __m256 one = splat(1.0f);
  const __m256 t = _mm256_div_ps(one, d.x);
  const __m256 s = _mm256_mul_ps(n.x, t);
  const __m256 u = _mm256_fmsub_ps(t, n.x, s);
  const __m256 v = _mm256_fnmadd_ps(d.y, t, _mm256_fnmadd_ps(d.x, t, one));
  return {s, _mm256_fmadd_ps(s, v, _mm256_fmadd_ps(n.y, t, u))};
}
// 2^e as a float (e within float's normal exponents)
FIELDBRAIN_LEGACY_TANH_INLINE __m256 pow2(__m256i e) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(0x7f)), 23));
}
// x * 2^q for the small q exp takes here (two exact power-of-two products)
FIELDBRAIN_LEGACY_TANH_INLINE __m256 scaled(__m256 x, __m256i q) {
  const __m256i half = _mm256_srai_epi32(q, 1);
  return _mm256_mul_ps(_mm256_mul_ps(x, pow2(half)), pow2(_mm256_sub_epi32(q, half)));
}

// exp(s) of the reduced argument s (a double-float, |s| <= ln 2 / 2) before its scaling by 2^q:
// Sleef's polynomial and the double-float steps after it, shared by exp_pair and exp_pair_small.
FIELDBRAIN_LEGACY_TANH_INLINE Pair exp_reduced(Pair s) {
  __m256 u = splat(0.1980960224e-3f);
  u = _mm256_fmadd_ps(u, s.x, splat(0.1394256484e-2f));
  u = _mm256_fmadd_ps(u, s.x, splat(0.8333456703e-2f));
  u = _mm256_fmadd_ps(u, s.x, splat(0.4166637361e-1f));
  Pair t = sum(product(s, u), splat(0.166666659414234244790680580464f));
  t = sum(product(s, t), splat(0.5f));
  t = sum(s, product(square(s), t));
  return sum_larger_first(splat(1.0f), t);
}

// exp(a) of a non-negative float a as a double-float
FIELDBRAIN_LEGACY_TANH_INLINE Pair exp_pair(__m256 a) {
  const __m256 u0 = _mm256_mul_ps(a, splat(1.442695040888963407359924681001892137426645954f));
  const __m256i q = _mm256_cvtps_epi32(u0);  // round to nearest, even
  const __m256 qf = _mm256_cvtepi32_ps(q);
  Pair s = sum(Pair{a, _mm256_setzero_ps()}, _mm256_mul_ps(qf, splat(-0.693145751953125f)));
  s = sum(s, _mm256_mul_ps(qf, splat(-1.428606765330187045e-06f)));
  const Pair t = exp_reduced(s);
  return {scaled(t.x, q), scaled(t.y, q)};
}

// exp_pair for a in [0, 0.34) (q = 0): its reduction then adds -0 to (a, 0) twice and its
// scaling multiplies by 2^0 twice, which give back (a, +0) and t exactly; those operations
// are left out, the rest is exp_pair's, operation for operation. The field's values are
// mostly this small (81% of the in-place tanh's inputs lie between 1e-4 and 4e-3).
FIELDBRAIN_LEGACY_TANH_INLINE Pair exp_pair_small(__m256 a) {
  return exp_reduced(Pair{a, _mm256_setzero_ps()});
}

FIELDBRAIN_LEGACY_TANH_INLINE __m256 tanh8(__m256 x) {
  const __m256 sign = splat(-0.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);
  // (a NaN fails the comparison: the whole path)
  const bool small = _mm256_movemask_ps(_mm256_cmp_ps(a, splat(0.34f), _CMP_LT_OQ)) == 0xFF;
  const Pair e = small ? exp_pair_small(a) : exp_pair(a);
  const Pair r = reciprocal(e);
  const Pair minus_r{_mm256_xor_ps(r.x, sign), _mm256_xor_ps(r.y, sign)};
  const Pair q = quotient(sum(e, minus_r), sum(e, r));
  __m256 y = _mm256_add_ps(q.x, q.y);
  const __m256 one = _mm256_or_ps(_mm256_cmp_ps(a, splat(8.664339742f), _CMP_GT_OQ),
                                  _mm256_cmp_ps(y, y, _CMP_UNORD_Q));
  y = _mm256_blendv_ps(y, splat(1.0f), one);
  y = _mm256_xor_ps(y, _mm256_and_ps(sign, x));               // x's sign
  return _mm256_or_ps(y, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));  // NaN in, NaN out
}

}  // namespace fieldbrain::legacy::exact_tanh_detail

#endif
