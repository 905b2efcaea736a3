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
// 2^32 results. Near zero a short polynomial takes a vector where it provably rounds as this
// algorithm does (near_zero8, at the end). The header only; exact_tanh.h decides whether it may be
// used (the probe).
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

// Sleef's algorithm, every lane (tanh8 below tries the near-zero shortcut first)
FIELDBRAIN_LEGACY_TANH_INLINE __m256 tanh8_sleef(__m256 x) {
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

// The near-zero shortcut. Below 0.125 tanh x = x + c with c = x^3 P(x^2) (Taylor, four terms:
// |c| <= |x| / 192, so float Horner is accurate to ~2^-22 of c), and the float y = x + c rounds
// the same as Sleef's double-float quotient unless that quotient lies near a rounding midpoint.
// So y is taken only where it provably rounds as Sleef does: the exact sum x + c (y plus its
// Fast2Sum error e) moved by M either way still rounds to y, M bounding Sleef's error and c's:
//   M = 2^-45 + |y| (2^-41 + x^2 2^-21)
// (Sleef's absolute error ~2^-46 from e - 1/e near 1, its relative x^2 2^-27 from its float
// coefficient of s^3 / 6, c's x^2 2^-23; each term is twice the smallest that held over every
// float, below). Rounding is monotonic, so if both ends round to y every point between does.
// |x| < 2^-25 (zeros and subnormals too) is x itself, as Sleef gives it. Over all floats of
// |x| < 0.125, both signs (2.08e9), the shortcut's float equals tanh8_sleef's wherever it is
// taken (checked outside the tests; test/legacy/exact_tanh_near_zero_test.cpp holds it against
// at::tanh over every positive float below 0.125). It declines ~0.03-0.2% of the lanes between
// 2^-12 and 2^-6, every lane in [2^-25, 2^-21) (M exceeds their half ulp) and NaN; a vector
// takes it only when all its lanes do. ~3x cheaper than the whole algorithm.
struct NearZero {
  static constexpr float kBound = 0.125f;
  static constexpr float kIdentity = 0x1p-25f;  // below: tanh x = x
  static constexpr float kAbsolute = 0x1p-45f, kRelative = 0x1p-41f, kSquared = 0x1p-21f;
  // 1/3, 2/15, 17/315, 62/2835, 1382/155925 with alternating signs, rounded to float
  static constexpr float kP0 = -1.0f / 3.0f, kP1 = 2.0f / 15.0f, kP2 = -17.0f / 315.0f,
                         kP3 = 62.0f / 2835.0f, kP4 = -1382.0f / 155925.0f;
};

// y = tanh(x) by the shortcut, true when every lane may take it
FIELDBRAIN_LEGACY_TANH_INLINE bool near_zero8(__m256 x, __m256& y) {
  using K = NearZero;
  const __m256 sign = splat(-0.0f);
  const __m256 a = _mm256_andnot_ps(sign, x);
  const __m256 z = _mm256_mul_ps(a, a);
  __m256 p = _mm256_fmadd_ps(splat(K::kP4), z, splat(K::kP3));
  p = _mm256_fmadd_ps(p, z, splat(K::kP2));
  p = _mm256_fmadd_ps(p, z, splat(K::kP1));
  p = _mm256_fmadd_ps(p, z, splat(K::kP0));
  const __m256 c = _mm256_mul_ps(_mm256_mul_ps(a, z), p);  // <= 0, |c| <= a
  const __m256 r = _mm256_add_ps(a, c);
  const __m256 e = _mm256_sub_ps(c, _mm256_sub_ps(r, a));  // a + c - r, exactly
  const __m256 m = _mm256_fmadd_ps(r, _mm256_fmadd_ps(z, splat(K::kSquared), splat(K::kRelative)),
                                   splat(K::kAbsolute));
  const __m256 up = _mm256_add_ps(r, _mm256_add_ps(e, m));
  const __m256 down = _mm256_add_ps(r, _mm256_sub_ps(e, m));
  const __m256 clear =
      _mm256_and_ps(_mm256_cmp_ps(up, r, _CMP_EQ_OQ), _mm256_cmp_ps(down, r, _CMP_EQ_OQ));
  const __m256 taken =
      _mm256_and_ps(_mm256_cmp_ps(a, splat(K::kBound), _CMP_LT_OQ),
                    _mm256_or_ps(clear, _mm256_cmp_ps(a, splat(K::kIdentity), _CMP_LT_OQ)));
  y = _mm256_xor_ps(r, _mm256_and_ps(sign, x));  // x's sign (r = a below 2^-25)
  return _mm256_movemask_ps(taken) == 0xFF;
}

// tanh of 8 floats, Sleef's float in every lane
FIELDBRAIN_LEGACY_TANH_INLINE __m256 tanh8(__m256 x) {
  __m256 y;
  return near_zero8(x, y) ? y : tanh8_sleef(x);
}

}  // namespace fieldbrain::legacy::exact_tanh_detail

#endif
