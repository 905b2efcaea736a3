#include "brain/legacy/exact_normal.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define FIELDBRAIN_LEGACY_NORMAL_SIMD __attribute__((target("avx2,fma")))
#define FIELDBRAIN_LEGACY_NORMAL_X86 1
#else
#define FIELDBRAIN_LEGACY_NORMAL_SIMD
#define FIELDBRAIN_LEGACY_NORMAL_X86 0
#endif

namespace fieldbrain::legacy {

// (a named namespace: the library is built in unity batches, where anonymous ones are shared)
namespace exact_normal_detail {

constexpr int kStateN = 624, kStateM = 397;

// at::mt19937's next_state: the 624 words twisted in place.
void twist(uint32_t* p) {
  const auto mixed = [](uint32_t u, uint32_t v) {
    return (((u & 0x80000000u) | (v & 0x7fffffffu)) >> 1) ^ ((v & 1u) != 0 ? 0x9908b0dfu : 0u);
  };
  int i = 0;
  for (; i < kStateN - kStateM; ++i) p[i] = p[i + kStateM] ^ mixed(p[i], p[i + 1]);
  for (; i < kStateN - 1; ++i) p[i] = p[i + kStateM - kStateN] ^ mixed(p[i], p[i + 1]);
  p[kStateN - 1] = p[kStateM - 1] ^ mixed(p[kStateN - 1], p[0]);
}

inline uint32_t tempered(uint32_t y) {
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= (y >> 18);
  return y;
}

// uniform_real_distribution<float>(0, 1) of one 32-bit draw: its low 24 bits times 2^-24
// (exact).
inline float uniform24(uint32_t y) {
  return static_cast<float>(y & 0xffffffu) * 0x1p-24f;
}

// `count` tempered words from `state` as uniforms into out.
FIELDBRAIN_LEGACY_NORMAL_SIMD void uniforms_from(const uint32_t* state, int64_t count,
                                                 float* out) {
  int64_t i = 0;
#if FIELDBRAIN_LEGACY_NORMAL_X86
  const __m256i b1 = _mm256_set1_epi32(static_cast<int>(0x9d2c5680u));
  const __m256i b2 = _mm256_set1_epi32(static_cast<int>(0xefc60000u));
  const __m256i low24 = _mm256_set1_epi32(0xffffff);
  const __m256 scale = _mm256_set1_ps(0x1p-24f);
  for (; i + 8 <= count; i += 8) {
    __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state + i));
    y = _mm256_xor_si256(y, _mm256_srli_epi32(y, 11));
    y = _mm256_xor_si256(y, _mm256_and_si256(_mm256_slli_epi32(y, 7), b1));
    y = _mm256_xor_si256(y, _mm256_and_si256(_mm256_slli_epi32(y, 15), b2));
    y = _mm256_xor_si256(y, _mm256_srli_epi32(y, 18));
    const __m256 f = _mm256_cvtepi32_ps(_mm256_and_si256(y, low24));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(f, scale));
  }
#endif
  for (; i < count; ++i) out[i] = uniform24(tempered(state[i]));
}

// n draws of at::mt19937::operator() as uniforms, the engine's words stepped as it steps them
// (a twist when `left_` would reach 0; each twist gives 624 words).
void draw_uniforms(at::mt19937_data_pod& pod, float* out, int64_t n) {
  while (n > 0) {
    if (pod.left_ == 1) {
      twist(pod.state_.data());
      pod.left_ = kStateN + 1;
      pod.next_ = 0;
    }
    const int64_t take = std::min<int64_t>(n, pod.left_ - 1);
    uniforms_from(pod.state_.data() + pod.next_, take, out);
    pod.next_ += static_cast<uint32_t>(take);
    pod.left_ -= static_cast<int>(take);
    out += take;
    n -= take;
  }
}

#if FIELDBRAIN_LEGACY_NORMAL_X86
FIELDBRAIN_LEGACY_NORMAL_SIMD inline __m256 bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return _mm256_set1_ps(f);
}

// normal_fill_16_AVX2 on data[0..16): u1 = 1 - data[0..8), theta = 2 pi data[8..16), the
// radius sqrt(-2 log u1) and theta's cos and sin as ATen's AVX2 build computes them (Cephes
// polynomials, Cody-Waite reduction of theta by pi / 4, the FMAs where its compiler fused a
// product and a sum), then radius * cos and radius * sin times std plus mean.
FIELDBRAIN_LEGACY_NORMAL_SIMD void box_muller_16(float* data, __m256 mean, __m256 std) {
  const __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
  const __m256 u1 = _mm256_sub_ps(one, _mm256_loadu_ps(data));
  const __m256 theta = _mm256_mul_ps(bits(0x40c90fdbu), _mm256_loadu_ps(data + 8));
  // log(u1)
  const __m256 invalid = _mm256_cmp_ps(u1, _mm256_setzero_ps(), _CMP_LE_OS);
  __m256 x = _mm256_max_ps(u1, bits(0x00800000u));
  __m256i exponent = _mm256_srli_epi32(_mm256_castps_si256(x), 23);
  x = _mm256_and_ps(x, bits(0x807fffffu));
  exponent = _mm256_add_epi32(exponent, _mm256_set1_epi32(-127));
  x = _mm256_or_ps(x, half);
  __m256 e = _mm256_add_ps(_mm256_cvtepi32_ps(exponent), one);
  const __m256 small = _mm256_cmp_ps(x, bits(0x3f3504f3u), _CMP_LT_OS);
  const __m256 tmp = _mm256_and_ps(x, small);
  x = _mm256_add_ps(x, _mm256_set1_ps(-1.0f));
  e = _mm256_sub_ps(e, _mm256_and_ps(small, one));
  const __m256 e_q1 = _mm256_mul_ps(e, bits(0xb95e8083u));
  x = _mm256_add_ps(tmp, x);
  __m256 y = bits(0x3d9021bbu);
  for (uint32_t p : {0xbdebd1b8u, 0x3def251au, 0xbdfe5d4fu, 0x3e11e9bfu, 0xbe2aae50u, 0x3e4cceacu,
                     0xbe7ffffcu, 0x3eaaaaaau})
    y = _mm256_fmadd_ps(x, y, bits(p));
  const __m256 z = _mm256_mul_ps(x, x);
  y = _mm256_mul_ps(x, y);
  y = _mm256_fmadd_ps(y, z, e_q1);
  y = _mm256_fnmadd_ps(z, half, y);
  x = _mm256_add_ps(x, y);
  __m256 log_u1 = _mm256_fmadd_ps(e, bits(0x3f318000u), x);
  log_u1 = _mm256_or_ps(log_u1, invalid);
  // sincos(theta)
  __m256 t = _mm256_and_ps(theta, bits(0x7fffffffu));
  __m256 sign_sin = _mm256_and_ps(theta, bits(0x80000000u));
  __m256i j = _mm256_cvttps_epi32(_mm256_mul_ps(t, bits(0x3fa2f983u)));
  j = _mm256_add_epi32(j, _mm256_set1_epi32(1));
  const __m256i j_even = _mm256_and_si256(j, _mm256_set1_epi32(-2));
  const __m256 jf = _mm256_cvtepi32_ps(j_even);
  const __m256i swap_sin = _mm256_slli_epi32(_mm256_and_si256(j, _mm256_set1_epi32(4)), 29);
  const __m256 poly_mask = _mm256_castsi256_ps(
      _mm256_cmpeq_epi32(_mm256_and_si256(j, _mm256_set1_epi32(2)), _mm256_setzero_si256()));
  const __m256i sign_cos = _mm256_slli_epi32(
      _mm256_andnot_si256(_mm256_add_epi32(j_even, _mm256_set1_epi32(-2)),
                          _mm256_set1_epi32(4)),
      29);
  t = _mm256_fmadd_ps(jf, bits(0xbf490000u), t);
  sign_sin = _mm256_xor_ps(sign_sin, _mm256_castsi256_ps(swap_sin));
  t = _mm256_fmadd_ps(jf, bits(0xb97da000u), t);
  t = _mm256_fmadd_ps(jf, bits(0xb3222169u), t);
  const __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(log_u1, _mm256_set1_ps(-2.0f)));
  const __m256 t2 = _mm256_mul_ps(t, t);
  __m256 yc = _mm256_fmadd_ps(t2, bits(0x37ccf5ceu), bits(0xbab6061au));
  yc = _mm256_fmadd_ps(t2, yc, bits(0x3d2aaaa5u));
  const __m256 half_t2 = _mm256_mul_ps(t2, half);
  yc = _mm256_mul_ps(t2, yc);
  yc = _mm256_fmsub_ps(yc, t2, half_t2);
  __m256 ys = _mm256_fmadd_ps(bits(0xb94ca1f9u), t2, bits(0x3c08839eu));
  ys = _mm256_fmadd_ps(t2, ys, bits(0xbe2aaaa3u));
  yc = _mm256_add_ps(yc, one);
  ys = _mm256_mul_ps(t2, ys);
  ys = _mm256_fmadd_ps(ys, t, t);
  const __m256 sin2 = _mm256_and_ps(ys, poly_mask);
  const __m256 sin1 = _mm256_andnot_ps(poly_mask, yc);
  ys = _mm256_sub_ps(ys, sin2);
  yc = _mm256_sub_ps(yc, sin1);
  const __m256 sin_v = _mm256_xor_ps(_mm256_add_ps(sin2, sin1), sign_sin);
  const __m256 cos_v = _mm256_xor_ps(_mm256_add_ps(ys, yc), _mm256_castsi256_ps(sign_cos));
  _mm256_storeu_ps(data + 8, _mm256_fmadd_ps(_mm256_mul_ps(radius, sin_v), std, mean));
  _mm256_storeu_ps(data, _mm256_fmadd_ps(_mm256_mul_ps(radius, cos_v), std, mean));
}

// box_muller_16 on two blocks of 16 at once (data[0..32)), sixteen lanes wide (AVX-512F): lanes
// 0-7 of each vector are the first block's, 8-15 the second's; every operation is box_muller_16's
// (the same IEEE lanewise operation, its all-ones/zero masks as AVX-512 mask registers), so each
// value is box_muller_16's. Why: the transform is ~60 dependent operations per vector, many of them
// masks and integer steps; twice the lanes per instruction halves what the front end carries.
// test/legacy/exact_normal_wide_test.cpp holds it against box_muller_16 on every block.
#define FIELDBRAIN_LEGACY_NORMAL_WIDE __attribute__((target("avx512f,fma")))
// Every lane: operations that have a masked form use it with every lane set (the same
// instruction; GCC 12's unmasked forms start from an "undefined" vector it warns about).
constexpr __mmask16 kAll16 = 0xFFFF;
FIELDBRAIN_LEGACY_NORMAL_WIDE inline __m512 bits16(uint32_t b) {
  return _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(b)));
}
// p[0..8) in lanes 0-7 and p[16..24) in lanes 8-15 (lane k >= 8 of a load at p + 8 is
// p[k + 8]; the masks read and write nothing else)
FIELDBRAIN_LEGACY_NORMAL_WIDE inline __m512 halves(const float* p) {
  return _mm512_mask_loadu_ps(_mm512_maskz_loadu_ps(0x00FF, p), 0xFF00, p + 8);
}
FIELDBRAIN_LEGACY_NORMAL_WIDE inline void store_halves(__m512 v, float* p) {
  _mm512_mask_storeu_ps(p, 0x00FF, v);
  _mm512_mask_storeu_ps(p + 8, 0xFF00, v);
}
FIELDBRAIN_LEGACY_NORMAL_WIDE inline __m512 and16(__m512 a, uint32_t b) {
  return _mm512_castsi512_ps(
      _mm512_and_si512(_mm512_castps_si512(a), _mm512_set1_epi32(static_cast<int>(b))));
}
FIELDBRAIN_LEGACY_NORMAL_WIDE inline __m512 xor16(__m512 a, __m512 b) {
  return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
FIELDBRAIN_LEGACY_NORMAL_WIDE void box_muller_32(float* data, float mean_f, float std_f) {
  const __m512 one = _mm512_set1_ps(1.0f), half = _mm512_set1_ps(0.5f);
  const __m512 mean = _mm512_set1_ps(mean_f), std = _mm512_set1_ps(std_f);
  const __m512 u1 = _mm512_sub_ps(one, halves(data));
  const __m512 theta = _mm512_mul_ps(bits16(0x40c90fdbu), halves(data + 8));
  // log(u1)
  const __mmask16 invalid = _mm512_cmp_ps_mask(u1, _mm512_setzero_ps(), _CMP_LE_OS);
  __m512 x = _mm512_maskz_max_ps(kAll16, u1, bits16(0x00800000u));
  __m512i exponent = _mm512_maskz_srli_epi32(kAll16, _mm512_castps_si512(x), 23);
  x = and16(x, 0x807fffffu);
  exponent = _mm512_add_epi32(exponent, _mm512_set1_epi32(-127));
  x = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(x), _mm512_castps_si512(half)));
  __m512 e = _mm512_add_ps(_mm512_maskz_cvtepi32_ps(kAll16, exponent), one);
  const __mmask16 small = _mm512_cmp_ps_mask(x, bits16(0x3f3504f3u), _CMP_LT_OS);
  const __m512 tmp = _mm512_maskz_mov_ps(small, x);
  x = _mm512_add_ps(x, _mm512_set1_ps(-1.0f));
  e = _mm512_sub_ps(e, _mm512_maskz_mov_ps(small, one));
  const __m512 e_q1 = _mm512_mul_ps(e, bits16(0xb95e8083u));
  x = _mm512_add_ps(tmp, x);
  __m512 y = bits16(0x3d9021bbu);
  for (uint32_t p : {0xbdebd1b8u, 0x3def251au, 0xbdfe5d4fu, 0x3e11e9bfu, 0xbe2aae50u, 0x3e4cceacu,
                     0xbe7ffffcu, 0x3eaaaaaau})
    y = _mm512_fmadd_ps(x, y, bits16(p));
  const __m512 z = _mm512_mul_ps(x, x);
  y = _mm512_mul_ps(x, y);
  y = _mm512_fmadd_ps(y, z, e_q1);
  y = _mm512_fnmadd_ps(z, half, y);
  x = _mm512_add_ps(x, y);
  __m512 log_u1 = _mm512_fmadd_ps(e, bits16(0x3f318000u), x);
  log_u1 = _mm512_mask_mov_ps(log_u1, invalid, bits16(0xffffffffu));  // | all ones
  // sincos(theta)
  __m512 t = and16(theta, 0x7fffffffu);
  __m512 sign_sin = and16(theta, 0x80000000u);
  __m512i j = _mm512_maskz_cvttps_epi32(kAll16, _mm512_mul_ps(t, bits16(0x3fa2f983u)));
  j = _mm512_add_epi32(j, _mm512_set1_epi32(1));
  const __m512i j_even = _mm512_and_si512(j, _mm512_set1_epi32(-2));
  const __m512 jf = _mm512_maskz_cvtepi32_ps(kAll16, j_even);
  const __m512i swap_sin =
      _mm512_maskz_slli_epi32(kAll16, _mm512_and_si512(j, _mm512_set1_epi32(4)), 29);
  const __mmask16 poly_mask =
      _mm512_cmpeq_epi32_mask(_mm512_and_si512(j, _mm512_set1_epi32(2)), _mm512_setzero_si512());
  const __m512i sign_cos = _mm512_maskz_slli_epi32(
      kAll16,
      _mm512_maskz_andnot_epi32(kAll16, _mm512_add_epi32(j_even, _mm512_set1_epi32(-2)),
                                _mm512_set1_epi32(4)),
      29);
  t = _mm512_fmadd_ps(jf, bits16(0xbf490000u), t);
  sign_sin = xor16(sign_sin, _mm512_castsi512_ps(swap_sin));
  t = _mm512_fmadd_ps(jf, bits16(0xb97da000u), t);
  t = _mm512_fmadd_ps(jf, bits16(0xb3222169u), t);
  const __m512 radius = _mm512_maskz_sqrt_ps(kAll16, _mm512_mul_ps(log_u1, _mm512_set1_ps(-2.0f)));
  const __m512 t2 = _mm512_mul_ps(t, t);
  __m512 yc = _mm512_fmadd_ps(t2, bits16(0x37ccf5ceu), bits16(0xbab6061au));
  yc = _mm512_fmadd_ps(t2, yc, bits16(0x3d2aaaa5u));
  const __m512 half_t2 = _mm512_mul_ps(t2, half);
  yc = _mm512_mul_ps(t2, yc);
  yc = _mm512_fmsub_ps(yc, t2, half_t2);
  __m512 ys = _mm512_fmadd_ps(bits16(0xb94ca1f9u), t2, bits16(0x3c08839eu));
  ys = _mm512_fmadd_ps(t2, ys, bits16(0xbe2aaaa3u));
  yc = _mm512_add_ps(yc, one);
  ys = _mm512_mul_ps(t2, ys);
  ys = _mm512_fmadd_ps(ys, t, t);
  const __m512 sin2 = _mm512_maskz_mov_ps(poly_mask, ys);
  const __m512 sin1 = _mm512_maskz_mov_ps(static_cast<__mmask16>(~poly_mask), yc);
  ys = _mm512_sub_ps(ys, sin2);
  yc = _mm512_sub_ps(yc, sin1);
  const __m512 sin_v = xor16(_mm512_add_ps(sin2, sin1), sign_sin);
  const __m512 cos_v = xor16(_mm512_add_ps(ys, yc), _mm512_castsi512_ps(sign_cos));
  store_halves(_mm512_fmadd_ps(_mm512_mul_ps(radius, sin_v), std, mean), data + 8);
  store_halves(_mm512_fmadd_ps(_mm512_mul_ps(radius, cos_v), std, mean), data);
}

bool wide_supported() {
  static const bool supported = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  return supported;
}

#endif

// normal_fill_AVX2: n uniforms, Box-Muller on each block of 16, and where n is not a multiple
// of 16 the last 16 values drawn again and transformed.
FIELDBRAIN_LEGACY_NORMAL_SIMD void fill_normals(at::mt19937_data_pod& pod, float* x, int64_t n,
                                                float mean, float std) {
  draw_uniforms(pod, x, n);
#if FIELDBRAIN_LEGACY_NORMAL_X86
  const __m256 m = _mm256_set1_ps(mean), s = _mm256_set1_ps(std);
  int64_t i = 0;
  if (wide_supported())
    for (; i + 32 <= n; i += 32) box_muller_32(x + i, mean, std);
  for (; i < n - 15; i += 16) box_muller_16(x + i, m, s);
  if (n % 16 != 0) {
    float* last = x + n - 16;
    draw_uniforms(pod, last, 16);
    box_muller_16(last, m, s);
  }
#else
  (void)mean;
  (void)std;
#endif
}

#if FIELDBRAIN_LEGACY_NORMAL_X86
bool same_floats(const torch::Tensor& a, const torch::Tensor& b) {
  return a.numel() == b.numel() &&
         std::memcmp(a.data_ptr(), b.data_ptr(), sizeof(float) * a.numel()) == 0;
}
#endif

bool probe() {
#if FIELDBRAIN_LEGACY_NORMAL_X86
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) return false;
  for (int64_t n : {16, 17, 40, 623, 624, 1000, 4096, 5003}) {
    for (double mean : {0.0, 0.3}) {
      const double std = mean == 0.0 ? 1.0 : 1.7;
      const auto seed = static_cast<uint64_t>(1000 + n);
      at::Generator ours = at::make_generator<at::CPUGeneratorImpl>(seed);
      at::Generator theirs = at::make_generator<at::CPUGeneratorImpl>(seed);
      // start mid-block, as the brain's generator does
      torch::empty({static_cast<int64_t>(n % 97) + 3}).uniform_(0, 1, ours);
      torch::empty({static_cast<int64_t>(n % 97) + 3}).uniform_(0, 1, theirs);
      torch::Tensor a = torch::empty({n}, torch::kFloat32);
      exact_normal_fill_unchecked(a.data_ptr<float>(), n, mean, std, ours);
      torch::Tensor b = torch::empty({n}, torch::kFloat32).normal_(mean, std, theirs);
      if (!same_floats(a, b)) return false;
      const torch::Tensor sa = ours.get_state(), sb = theirs.get_state();
      if (!torch::equal(sa, sb)) return false;
    }
  }
  return true;
#else
  return false;
#endif
}

}  // namespace exact_normal_detail

bool exact_normal_available() {
  static const bool available = exact_normal_detail::probe();
  return available;
}

FIELDBRAIN_LEGACY_NORMAL_SIMD bool exact_box_muller(float* x, int64_t n, float mean, float std,
                                                    bool wide) {
#if FIELDBRAIN_LEGACY_NORMAL_X86
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) return false;
  if (wide && !exact_normal_detail::wide_supported()) return false;
  const __m256 m = _mm256_set1_ps(mean), s = _mm256_set1_ps(std);
  for (int64_t i = 0; i + 32 <= n; i += 32) {
    if (wide) {
      exact_normal_detail::box_muller_32(x + i, mean, std);
    } else {
      exact_normal_detail::box_muller_16(x + i, m, s);
      exact_normal_detail::box_muller_16(x + i + 16, m, s);
    }
  }
  return true;
#else
  (void)x, (void)n, (void)mean, (void)std, (void)wide;
  return false;
#endif
}

void exact_normal_fill_unchecked(float* x, int64_t n, double mean, double std,
                                 at::Generator& gen) {
  auto* impl = at::check_generator<at::CPUGeneratorImpl>(gen);
  std::lock_guard<std::mutex> lock(gen.mutex());
  at::mt19937 engine = impl->engine();
  at::mt19937_data_pod pod = engine.data();
  exact_normal_detail::fill_normals(pod, x, n, static_cast<float>(mean), static_cast<float>(std));
  engine.set_data(pod);
  impl->set_engine(engine);
}

bool exact_normal_fill(float* x, int64_t n, double mean, double std, at::Generator& gen) {
  if (n < 16 || !exact_normal_available()) return false;
  exact_normal_fill_unchecked(x, n, mean, std, gen);
  return true;
}

}  // namespace fieldbrain::legacy
