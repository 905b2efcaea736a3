// The fused CPU field step, compiled once per instruction set (see field_step_passes.h).
// FIELDBRAIN_ISA_NAMESPACE names the variant; CPU_CAPABILITY(_AVX2) selects at::vec's
// implementation (Sleef for tanh/exp under AVX2), exactly as ATen builds its own kernels.
//
// Formulas follow docs/cycle.md step 7 item by item; comments give the item number. Pass-1
// scratch holds, for one slab [x0,x1) plus halos, the per-voxel coefficients derived from the
// dynamics channels and the per-channel intermediates X2 (halo 2), Aq (halo 1) and X3:
//   X2 and Aq use padded planes of (R+2)^2 with a zero border, so the zero padding of the
//   conv3d's of items 3-4 costs no branches; planes outside [0,R) stay all zero.
#include "brain/ops/cpu/field_step_passes.h"

#include <ATen/cpu/vec/vec.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>

#include "brain/ops/attractor_math.h"
#include "brain/ops/cpu/vector_pieces.h"
#include "brain/ops/philox.h"

#ifndef FIELDBRAIN_ISA_NAMESPACE
#error "compile with -DFIELDBRAIN_ISA_NAMESPACE=isa_<name>"
#endif

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace FIELDBRAIN_ISA_NAMESPACE {
namespace {

using pieces::for_vectors;
using pieces::kW;
using pieces::load;
using pieces::store;
using pieces::Vec;
constexpr int64_t kFieldChannels = 64;
constexpr int64_t kActivity = 48;  // channels 0..47 (X); 48..63 are the dynamics D
// ATen's float sigmoid: 1 / (1 + exp(-x)).
inline Vec sigmoid(const Vec& x) { return (Vec(1.f) + x.neg().exp()).reciprocal(); }
// tanh. Under AVX2/AVX-512 a branch-free expm1-based version (|error| ~1e-7, NaN in -> NaN
// out, about 3x cheaper than Sleef's u10 tanhf, which dominated the pass); else at::vec's.
#if defined(CPU_CAPABILITY_AVX2)
inline Vec tanh_(const Vec& v) {
  const __m256 x = v;
  const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.f);
  // u = -2|x| in [-40, 0] (tanh is 1 in float beyond); max(-40, u) keeps a NaN u.
  const __m256 u = _mm256_max_ps(_mm256_set1_ps(-40.f),
                                 _mm256_mul_ps(_mm256_andnot_ps(sign, x), _mm256_set1_ps(-2.f)));
  // u = n ln2 + r, |r| <= ln2/2 (ln2 split in two parts so n ln2 is exact).
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(u, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), u);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440054690583e-4f), r);
  // expm1(r) by its Taylor series to r^7 (remainder < 1e-8 on |r| <= 0.35).
  __m256 q = _mm256_set1_ps(1.f / 5040.f);
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.f / 720.f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.f / 120.f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.f / 24.f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.f / 6.f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0.5f));
  const __m256 p = _mm256_fmadd_ps(q, _mm256_mul_ps(r, r), r);
  // expm1(u) = 2^n (1 + p) - 1 = 2^n p + (2^n - 1); n in [-58, 0], so 2^n is a normal float.
  const __m256 scale = _mm256_castsi256_ps(_mm256_slli_epi32(
      _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23));
  const __m256 em1 = _mm256_fmadd_ps(scale, p, _mm256_sub_ps(scale, one));
  // tanh|x| = (1 - e^u) / (1 + e^u) = -em1 / (2 + em1); then the sign of x. The divider is
  // the bottleneck of this loop: a reciprocal estimate (2^-12) with one Newton step (~2^-23)
  // instead, the denominator being in [1, 2].
  const __m256 den = _mm256_add_ps(_mm256_set1_ps(2.f), em1);
  __m256 inv = _mm256_rcp_ps(den);
  inv = _mm256_mul_ps(inv, _mm256_fnmadd_ps(den, inv, _mm256_set1_ps(2.f)));
  const __m256 t = _mm256_mul_ps(_mm256_sub_ps(_mm256_setzero_ps(), em1), inv);
  return _mm256_or_ps(t, _mm256_and_ps(x, sign));
}
#elif defined(CPU_CAPABILITY_AVX512)
inline Vec tanh_(const Vec& v) {  // the AVX2 version, 16 lanes
  const __m512 x = v;
  const __m512i sign = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  const __m512 u = _mm512_max_ps(_mm512_set1_ps(-40.f),
                                 _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(-2.f)));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(u, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), u);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440054690583e-4f), r);
  __m512 q = _mm512_set1_ps(1.f / 5040.f);
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.f / 720.f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.f / 120.f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.f / 24.f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(1.f / 6.f));
  q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(0.5f));
  const __m512 p = _mm512_fmadd_ps(q, _mm512_mul_ps(r, r), r);
  const __m512 scale = _mm512_castsi512_ps(_mm512_slli_epi32(
      _mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23));
  const __m512 em1 = _mm512_fmadd_ps(scale, p, _mm512_sub_ps(scale, _mm512_set1_ps(1.f)));
  const __m512 den = _mm512_add_ps(_mm512_set1_ps(2.f), em1);
  __m512 inv = _mm512_rcp14_ps(den);
  inv = _mm512_mul_ps(inv, _mm512_fnmadd_ps(den, inv, _mm512_set1_ps(2.f)));
  const __m512 t = _mm512_mul_ps(_mm512_sub_ps(_mm512_setzero_ps(), em1), inv);
  return _mm512_castsi512_ps(_mm512_or_si512(
      _mm512_castps_si512(t), _mm512_and_si512(_mm512_castps_si512(x), sign)));
}
#else
inline Vec tanh_(const Vec& v) { return v.tanh(); }
#endif
// NaN -> 0 (item 7); acc + (ax < 0.1 ? 1 : 0); max(m, a) for NaN-free a. Native forms where
// at::vec's generic ones (vector masks converted back and forth, NaN-propagating max) cost
// two to three times the instructions in the inner loop; the results are the same bits.
#if defined(CPU_CAPABILITY_AVX512)
inline Vec repair(const Vec& x) {
  const __m512 v = x;
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, v, _CMP_ORD_Q), v);
}
inline Vec add_if_small(const Vec& acc, const Vec& ax) {
  const __m512 a = acc;
  return _mm512_mask_add_ps(a, _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.1f), _CMP_LT_OQ), a,
                            _mm512_set1_ps(1.f));
}
inline Vec max_plain(const Vec& m, const Vec& a) { return _mm512_max_ps(m, a); }
#elif defined(CPU_CAPABILITY_AVX2)
inline Vec repair(const Vec& x) {
  const __m256 v = x;
  return _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));
}
inline Vec add_if_small(const Vec& acc, const Vec& ax) {
  return _mm256_add_ps(acc, _mm256_and_ps(_mm256_cmp_ps(ax, _mm256_set1_ps(0.1f), _CMP_LT_OQ),
                                          _mm256_set1_ps(1.f)));
}
inline Vec max_plain(const Vec& m, const Vec& a) { return _mm256_max_ps(m, a); }
#else
inline Vec repair(const Vec& x) { return Vec::blendv(x, Vec(0.f), x.isnan()); }
inline Vec add_if_small(const Vec& acc, const Vec& ax) {
  return acc + ((ax < Vec(0.1f)) & Vec(1.f));
}
inline Vec max_plain(const Vec& m, const Vec& a) { return at::vec::maximum(m, a); }
#endif

constexpr size_t align16(size_t n) { return (n + 15) & ~size_t(15); }

// Offsets (in floats) of the pass-1 scratch arrays for a slab of n0 planes.
struct Pass1Layout {
  int64_t R, P, Rp, Pp, n0, n1, n2;
  size_t fk[4], fm, wt, dif[3], pl0, cc, x2, aq, x3, syz, sz, row, acc[4], noise, total;
  Pass1Layout(int64_t resolution, int64_t planes) {
    R = resolution;
    P = R * R;
    Rp = R + 2;
    Pp = Rp * Rp;
    n0 = planes;
    n1 = planes + 2;
    n2 = planes + 4;
    size_t at = 0;
    auto take = [&at](size_t floats) {
      size_t here = at;
      at += align16(floats);
      return here;
    };
    for (auto& o : fk) o = take(n2 * P);
    fm = take(n2 * P);
    wt = take(n2 * P);
    for (auto& o : dif) o = take(n1 * P);
    pl0 = take(n1 * P);
    cc = take(n0 * P);
    x2 = take(n2 * Pp);
    aq = take(n1 * Pp);
    x3 = take(n0 * P);
    syz = take(n1 * P);
    sz = take((R + 2) * R);
    row = take(R);
    for (auto& o : acc) o = take(n0 * P);
    noise = take(P);
    total = at;
  }
};

size_t pass1_scratch_floats(int64_t resolution, int64_t planes) {
  return Pass1Layout(resolution, planes).total;
}

void ef_stats(const FieldStepView& v, int64_t b, float* ef_max, float* ef_weight) {
  const int64_t V = v.resolution * v.resolution * v.resolution;
  const float* ef = v.ef + b * V;
  Vec m(0.f);
  double sum = 0.0;
  for_vectors(V, [&](int64_t i, int64_t n) {
    Vec a = load(ef + i, n).abs();
    m = at::vec::maximum(m, a);
    float tmp[kW];
    a.store(tmp);
    float s = 0.f;
    for (int64_t k = 0; k < n; ++k) s += tmp[k];
    sum += s;
  });
  float tmp[kW];
  m.store(tmp);
  float mx = 0.f;
  for (int64_t k = 0; k < kW; ++k) mx = (tmp[k] > mx || std::isnan(tmp[k])) ? tmp[k] : mx;
  *ef_max = mx;
  *ef_weight = std::min(0.5f, static_cast<float>(sum / static_cast<double>(V)));
}

// One pass-1 task: robot b's slab of planes [x0, x1), its arrays and its scratch `s`, as every
// step below reads them.
struct Slab {
  Slab(const FieldStepView& v, int64_t robot, int64_t first, int64_t end, float* scratch)
      : L(v.resolution, end - first), b(robot), x0(first), x1(end), s(scratch) {
    R = L.R;
    P = L.P;
    Rp = L.Rp;
    Pp = L.Pp;
    V = P * R;
    F = v.field + b * kFieldChannels * V;
    D = F + kActivity * V;
    // Noise: the given array, or made plane by plane from the robot's (seed, cycle).
    seeded = v.noise == nullptr;
    noise = seeded ? nullptr : v.noise + b * kActivity * V;
    seed = seeded ? static_cast<uint64_t>(v.noise_key[2 * b]) : 0;
    cycle = seeded ? static_cast<uint64_t>(v.noise_key[2 * b + 1]) : 0;
    wave = v.wave + b * V;
    ef = v.ef + b * V;
    sc = v.scalars + b * 8;
    out = v.out + b * kFieldChannels * V;
    // Planes covered with halo h, clipped to the domain.
    h2lo = std::max<int64_t>(0, x0 - 2);
    h2hi = std::min(R, x1 + 2);
    h1lo = std::max<int64_t>(0, x0 - 1);
    h1hi = std::min(R, x1 + 1);
  }
  const Pass1Layout L;
  int64_t b, x0, x1;
  float* s;
  int64_t R, P, Rp, Pp, V, h2lo, h2hi, h1lo, h1hi;
  const float *F, *D, *noise, *wave, *ef, *sc;
  float* out;
  bool seeded;
  uint64_t seed, cycle;
};

// Zero borders and out-of-domain planes of the padded buffers, and the accumulators.
void clear_slab_scratch(const Slab& S) {
  const Pass1Layout& L = S.L;
  float* s = S.s;
  const int64_t R = S.R, P = S.P, Pp = S.Pp;
  std::fill(s + L.x2, s + L.x2 + L.n2 * Pp, 0.f);
  std::fill(s + L.aq, s + L.aq + L.n1 * Pp, 0.f);
  std::fill(s + L.syz, s + L.syz + L.n1 * P, 0.f);
  std::fill(s + L.sz, s + L.sz + (R + 2) * R, 0.f);
  for (auto o : L.acc) std::fill(s + o, s + o + L.n0 * P, 0.f);
}

// Items 1, 3 and 4's per-voxel coefficients from the dynamics channels, into scratch: the
// decays f_k, their mean and the wave term (halo 2), the diffusivities dif and pl0 (halo 1),
// and the coupling weight cc (the slab).
void dynamics_coefficients(const Slab& S) {
  const Pass1Layout& L = S.L;
  float* s = S.s;
  const int64_t P = S.P, V = S.V, x0 = S.x0, x1 = S.x1;
  const int64_t h2lo = S.h2lo, h2hi = S.h2hi, h1lo = S.h1lo, h1hi = S.h1hi;
  const float *D = S.D, *wave = S.wave;
  const float gmu = S.sc[0] * 0.999f;
  for (int64_t x = h2lo; x < h2hi; ++x) {
    const int64_t i2 = x - (x0 - 2);
    float* fk[4];
    for (int k = 0; k < 4; ++k) fk[k] = s + L.fk[k] + i2 * P;
    float* fm = s + L.fm + i2 * P;
    float* wt = s + L.wt + i2 * P;
    const float* d = D + x * P;
    const float* w = wave + x * P;
    for_vectors(P, [&](int64_t i, int64_t n) {
      // item 1: dec = sigmoid(D[0:4]); f_k = dec_k * gmu; channels 32..47 use mean_k(dec) * gmu
      Vec d0 = sigmoid(load(d + i, n)), d1 = sigmoid(load(d + V + i, n));
      Vec d2 = sigmoid(load(d + 2 * V + i, n)), d3 = sigmoid(load(d + 3 * V + i, n));
      Vec g(gmu);
      store(d0 * g, fk[0] + i, n);
      store(d1 * g, fk[1] + i, n);
      store(d2 * g, fk[2] + i, n);
      store(d3 * g, fk[3] + i, n);
      store((((d0 + d1) + d2) + d3) / Vec(4.f) * g, fm + i, n);
      // item 2: 2 * 0.0005 * wave
      store(load(w + i, n) * Vec(0.001f), wt + i, n);
    });
  }
  for (int64_t x = h1lo; x < h1hi; ++x) {
    const int64_t i1 = x - (x0 - 1);
    const float* d = D + x * P;
    float* dif0 = s + L.dif[0] + i1 * P;
    float* dif1 = s + L.dif[1] + i1 * P;
    float* dif2 = s + L.dif[2] + i1 * P;
    float* pl0 = s + L.pl0 + i1 * P;
    for_vectors(P, [&](int64_t i, int64_t n) {
      // item 3: dif = tanh(D[4:8]) * 0.1 (channel 4 -> x, 5 -> y, 6 -> z); item 4: pl = sigmoid(D[12:16])
      store(tanh_(load(d + 4 * V + i, n)) * Vec(0.1f), dif0 + i, n);
      store(tanh_(load(d + 5 * V + i, n)) * Vec(0.1f), dif1 + i, n);
      store(tanh_(load(d + 6 * V + i, n)) * Vec(0.1f), dif2 + i, n);
      store(sigmoid(load(d + 12 * V + i, n)), pl0 + i, n);
    });
  }
  for (int64_t x = x0; x < x1; ++x) {
    const int64_t i0 = x - x0;
    const float* d = D + x * P;
    float* cc = s + L.cc + i0 * P;
    for_vectors(P, [&](int64_t i, int64_t n) {
      // item 4: mean_k(cw[k]) * pl[1]
      Vec cw = (((load(d + 8 * V + i, n) + load(d + 9 * V + i, n)) + load(d + 10 * V + i, n)) +
                load(d + 11 * V + i, n)) /
               Vec(4.f);
      store(cw * sigmoid(load(d + 13 * V + i, n)), cc + i, n);
    });
  }
}

// Items 1-2 for activity channel c: X2 = decay/shift(F) + (0.001 eps + 0.001 wave) * drive, on
// the planes of halo 2, into the padded X2 buffer.
void decay_and_drive(const Slab& S, int64_t c, const HaloNoise& halo) {
  const Pass1Layout& L = S.L;
  float* s = S.s;
  const int64_t b = S.b, R = S.R, P = S.P, Rp = S.Rp, Pp = S.Pp, V = S.V, x0 = S.x0;
  const int64_t h2lo = S.h2lo, h2hi = S.h2hi;
  const bool seeded = S.seeded;
  const uint64_t seed = S.seed, cycle = S.cycle;
  const float drive = S.sc[1];
  float* noise_plane = s + L.noise;
  float* x2buf = s + L.x2;
  const float* Fc = S.F + c * V;
  const float* Nc = seeded ? nullptr : S.noise + c * V;
  // items 1-2: X2 = decay/shift(F) + (0.001 eps + 0.001 wave) * drive, on planes of halo 2.
  for (int64_t x = h2lo; x < h2hi; ++x) {
    const int64_t i2 = x - (x0 - 2);
    const float* fc = Fc + x * P;
    const float* nz = Nc != nullptr ? Nc + x * P : noise_plane;
    if (seeded) {
      nz = halo.plane(b, c, x, R);
      if (nz == nullptr) {
        fill_normals(seed, cycle, philox::kStreamSpontaneous,
                     static_cast<uint64_t>(c * V + x * P), P, noise_plane);
        nz = noise_plane;
      }
    }
    const float* wt = s + L.wt + i2 * P;
    float* dst = x2buf + i2 * Pp + Rp + 1;
    const Vec vdrive(drive), k001(0.001f);
    if (c < 32) {
      const float* f = s + L.fk[c % 4] + i2 * P;
      for (int64_t y = 0; y < R; ++y) {
        const int64_t r = y * R;
        for_vectors(R, [&](int64_t z, int64_t n) {
          Vec x1v = load(fc + r + z, n) * load(f + r + z, n);
          Vec x2v = x1v + (k001 * load(nz + r + z, n) + load(wt + r + z, n)) * vdrive;
          store(x2v, dst + y * Rp + z, n);
        });
      }
    } else {
      const float* fm = s + L.fm + i2 * P;
      const float* fprev = fc - V;  // channel c-1, used for c > 32
      const bool shift = c > 32;
      for (int64_t y = 0; y < R; ++y) {
        const int64_t r = y * R;
        for_vectors(R, [&](int64_t z, int64_t n) {
          // T[c] = 0.85 T[c] + 0.15 T[c-1], both from the decayed products
          Vec m = load(fm + r + z, n);
          Vec x1v = Vec(0.85f) * (load(fc + r + z, n) * m);
          if (shift) x1v = x1v + Vec(0.15f) * (load(fprev + r + z, n) * m);
          Vec x2v = x1v + (k001 * load(nz + r + z, n) + load(wt + r + z, n)) * vdrive;
          store(x2v, dst + y * Rp + z, n);
        });
      }
    }
  }
}

// Items 3-4 of the channel whose X2 is in scratch: X3 = X2 + sum_a laplacian_a(X2) * dif[a]
// and Aq = tanh(X3 * pl0) on the planes of halo 1, then Aq's box sums along z and y.
void diffuse_and_box(const Slab& S) {
  const Pass1Layout& L = S.L;
  float* s = S.s;
  const int64_t R = S.R, P = S.P, Rp = S.Rp, Pp = S.Pp, x0 = S.x0, x1 = S.x1;
  const int64_t h1lo = S.h1lo, h1hi = S.h1hi;
  const float* x2buf = s + L.x2;
  float* aqbuf = s + L.aq;
  float* sz = s + L.sz;
  // item 3: X3 = X2 + sum_a laplacian_a(X2) * dif[a]; item 4: Aq = tanh(X3 * pl0). Halo 1.
  for (int64_t x = h1lo; x < h1hi; ++x) {
    const int64_t i1 = x - (x0 - 1);
    const bool interior = x >= x0 && x < x1;
    const float* c2 = x2buf + (i1 + 1) * Pp + Rp + 1;
    const float* dif0 = s + L.dif[0] + i1 * P;
    const float* dif1 = s + L.dif[1] + i1 * P;
    const float* dif2 = s + L.dif[2] + i1 * P;
    const float* pl0 = s + L.pl0 + i1 * P;
    float* aq = aqbuf + i1 * Pp + Rp + 1;
    for (int64_t y = 0; y < R; ++y) {
      const int64_t r = y * R;
      const float* cr = c2 + y * Rp;
      float* x3row = interior ? s + L.x3 + (x - x0) * P + r : s + L.row;
      for_vectors(R, [&](int64_t z, int64_t n) {
        Vec cv = load(cr + z, n);
        Vec two_c = cv + cv;
        Vec lx = (load(cr + z - Pp, n) + load(cr + z + Pp, n)) - two_c;
        Vec ly = (load(cr + z - Rp, n) + load(cr + z + Rp, n)) - two_c;
        Vec lz = (load(cr + z - 1, n) + load(cr + z + 1, n)) - two_c;
        Vec x3 = ((cv + lx * load(dif0 + r + z, n)) + ly * load(dif1 + r + z, n)) +
                 lz * load(dif2 + r + z, n);
        store(x3, x3row + z, n);
        store(tanh_(x3 * load(pl0 + r + z, n)), aq + y * Rp + z, n);
      });
    }
    // Box sums of Aq: along z into sz (rows padded in y), then along y into syz.
    float* syz = s + L.syz + i1 * P;
    for (int64_t y = 0; y < R; ++y) {
      const float* a = aq + y * Rp;
      float* o = sz + (y + 1) * R;
      for_vectors(R, [&](int64_t z, int64_t n) {
        store((load(a + z - 1, n) + load(a + z, n)) + load(a + z + 1, n), o + z, n);
      });
    }
    for (int64_t y = 0; y < R; ++y) {
      const float* a = sz + y * R;
      float* o = syz + y * R;
      for_vectors(R, [&](int64_t z, int64_t n) {
        store((load(a + z, n) + load(a + R + z, n)) + load(a + 2 * R + z, n), o + z, n);
      });
    }
  }
}

// Item 4 for channel c: X4 = X3 + 0.1 * (box27(Aq) - Aq) * mean(cw) * pl1 into the slab's
// planes of out; item 5's sums over channels; item 7's repair; vmax = max |X4| so far.
void couple_and_accumulate(const Slab& S, int64_t c, Vec& vmax) {
  const Pass1Layout& L = S.L;
  float* s = S.s;
  const int64_t R = S.R, P = S.P, Rp = S.Rp, Pp = S.Pp, V = S.V, x0 = S.x0, x1 = S.x1;
  const float* aqbuf = s + L.aq;
  float* out = S.out;
  // item 4: X4 = X3 + 0.1 * (box27(Aq) - Aq) * mean(cw) * pl1; item 5 sums; item 7 repair.
  float* acc_abs = s + L.acc[0];
  float* acc_sum = s + L.acc[1];
  float* acc_sq = s + L.acc[2];
  float* acc_small = s + L.acc[3];
  for (int64_t x = x0; x < x1; ++x) {
    const int64_t i0 = x - x0;
    const float* s0 = s + L.syz + i0 * P;
    const float* s1 = s0 + P;
    const float* s2 = s1 + P;
    const float* aq = aqbuf + (i0 + 1) * Pp + Rp + 1;
    const float* x3 = s + L.x3 + i0 * P;
    const float* cc = s + L.cc + i0 * P;
    float* o = out + c * V + x * P;
    const int64_t a0 = i0 * P;
    for (int64_t y = 0; y < R; ++y) {
      const int64_t r = y * R;
      for_vectors(R, [&](int64_t z, int64_t n) {
        const int64_t k = r + z;
        Vec box = (load(s0 + k, n) + load(s1 + k, n)) + load(s2 + k, n);
        Vec nb = Vec(0.1f) * (box - load(aq + y * Rp + z, n));
        Vec x4 = load(x3 + k, n) + nb * load(cc + k, n);
        Vec ax = x4.abs();
        store(load(acc_abs + a0 + k, n) + ax, acc_abs + a0 + k, n);
        store(load(acc_sum + a0 + k, n) + x4, acc_sum + a0 + k, n);
        store(load(acc_sq + a0 + k, n) + x4 * x4, acc_sq + a0 + k, n);
        store(add_if_small(load(acc_small + a0 + k, n), ax), acc_small + a0 + k, n);
        Vec fixed = repair(x4);
        if (n < kW) {  // keep the padding lanes of the tail out of the max
          float tmp[kW] = {};
          fixed.store(tmp, n);
          fixed = Vec::loadu(tmp);
        }
        vmax = max_plain(vmax, fixed.abs());
        store(fixed, o + k, n);
      });
    }
  }
}

// Item 5: self-modification of the dynamics channels; item 7: their repair and clamp(-5, 5).
void self_modify(const Slab& S, float ef_max, float ef_weight) {
  const Pass1Layout& L = S.L;
  const float* s = S.s;
  const int64_t P = S.P, V = S.V, x0 = S.x0, x1 = S.x1;
  const float *D = S.D, *ef = S.ef;
  float* out = S.out;
  const float explore = S.sc[2], sigma = S.sc[3];
  const bool has_ef = S.sc[4] > 0.5f;
  // item 5: self-modification of the dynamics channels; item 7: repair and clamp(-5, 5).
  for (int64_t x = x0; x < x1; ++x) {
    const int64_t i0 = x - x0;
    const float* d = D + x * P;
    const float* e = ef + x * P;
    const float* acc_abs = s + L.acc[0] + i0 * P;
    const float* acc_sum = s + L.acc[1] + i0 * P;
    const float* acc_sq = s + L.acc[2] + i0 * P;
    const float* acc_small = s + L.acc[3] + i0 * P;
    float* o = out + kActivity * V + x * P;
    for_vectors(P, [&](int64_t i, int64_t n) {
      const Vec vs(sigma);
      Vec sum = load(acc_sum + i, n);
      Vec E = load(acc_abs + i, n) / Vec(48.f);
      Vec var = (load(acc_sq + i, n) - sum * (sum / Vec(48.f))) / Vec(47.f);
      Vec Sp = load(acc_small + i, n) / Vec(48.f);
      Vec u[4] = {(E * vs).neg(), var * vs, Vec(0.5f) * Sp * vs,
                  Vec(0.5f) * (E * Vec(explore) - Vec(0.5f)) * vs};
      Vec mE, mod_dec, mod_dif, mod_pl;
      if (has_ef) {
        mE = load(e + i, n).abs() / Vec(ef_max + 1e-8f);
        mod_dec = Vec(0.1f) * (Vec(1.f) - Vec(0.5f) * mE);
        mod_dif = Vec(0.1f) * (Vec(0.2f) * mE - Vec(0.1f));
        mod_pl = Vec(0.1f) * sigmoid(Vec(2.f) * mE - Vec(0.5f));
      }
      for (int64_t j = 0; j < 16; ++j) {
        Vec d1 = Vec(0.95f) * load(d + j * V + i, n);
        if (j % 4 == 0) d1 = d1 + Vec(0.05f) * u[j / 4];
        if (has_ef) {
          Vec mod = d1;
          if (j < 4) {
            mod = Vec(0.9f) * d1 + mod_dec;
          } else if (j < 8) {
            mod = Vec(0.9f) * d1 + mod_dif;
          } else if (j >= 12) {
            mod = Vec(0.9f) * d1 + mod_pl;
          }
          d1 = Vec(1.f - ef_weight) * d1 + Vec(ef_weight) * mod;
        }
        d1 = at::vec::clamp(repair(d1), Vec(-5.f), Vec(5.f));
        store(d1, o + j * V + i, n);
      }
    });
  }
}

float pass1_slab(const FieldStepView& v, int64_t b, int64_t x0, int64_t x1, float ef_max,
                 float ef_weight, const HaloNoise& halo, float* s) {
  const Slab S(v, b, x0, x1, s);
  clear_slab_scratch(S);
  dynamics_coefficients(S);
  Vec vmax(0.f);
  for (int64_t c = 0; c < kActivity; ++c) {
    decay_and_drive(S, c, halo);
    diffuse_and_box(S);
    couple_and_accumulate(S, c, vmax);
  }
  self_modify(S, ef_max, ef_weight);
  float tmp[kW];
  vmax.store(tmp);
  float mx = 0.f;
  for (int64_t k = 0; k < kW; ++k) mx = std::max(mx, tmp[k]);
  return mx;
}

// Pass 2 streams each channel once: it keeps the original (squashed) planes x-1, x, x+1 and
// plane 0 in four small buffers, rows padded periodically in z ([c[R-1], c[0..R-1], c[0]]),
// and overwrites plane x of the channel in place.
size_t pass2_scratch_floats(int64_t resolution) {
  return 4 * align16(resolution * (resolution + 2));
}

void pass2_channel(const FieldStepView& v, int64_t b, int64_t c, bool squash, float* scratch) {
  const int64_t R = v.resolution, P = R * R, V = P * R, Rq = R + 2;
  const size_t slot = align16(R * Rq);
  float* ch = v.out + (b * kFieldChannels + c) * V;
  const bool do_tanh = squash && c < kActivity;  // item 7: tanh of channels 0..47
  auto load_plane = [&](int64_t x, float* dst) {
    for (int64_t y = 0; y < R; ++y) {
      const float* src = ch + x * P + y * R;
      float* row = dst + y * Rq + 1;
      for_vectors(R, [&](int64_t z, int64_t n) {
        const Vec f = load(src + z, n);
        store(do_tanh ? tanh_(f) : f, row + z, n);
      });
      row[-1] = row[R - 1];
      row[R] = row[0];
    }
  };
  float* first = scratch;
  float* slots[3] = {scratch + slot, scratch + 2 * slot, scratch + 3 * slot};
  load_plane(0, first);
  const float* cur = first;
  const float* prev = first;
  if (R > 1) {
    load_plane(R - 1, slots[0]);
    prev = slots[0];
  }
  auto free_slot = [&](const float* a, const float* b2) {
    for (float* s : slots) {
      if (s != a && s != b2) return s;
    }
    return slots[2];
  };
  const float* next = first;
  if (R > 1) {
    float* s = free_slot(prev, cur);
    if (1 < R - 1) {
      load_plane(1, s);
      next = s;
    } else {
      next = prev;  // R = 2: plane 1 is plane R-1
    }
  }
  // item 8: F = Fn + 0.05 * sum_a (roll(+1) + roll(-1) - 2 Fn) / 2, periodic on every axis.
  const Vec k(0.025f);
  for (int64_t x = 0; x < R; ++x) {
    for (int64_t y = 0; y < R; ++y) {
      const int64_t r = y * Rq + 1;
      const int64_t rm = ((y + R - 1) % R) * Rq + 1, rp = ((y + 1) % R) * Rq + 1;
      const float* cr = cur + r;
      float* o = ch + x * P + y * R;
      for_vectors(R, [&](int64_t z, int64_t n) {
        const Vec cv = load(cr + z, n);
        const Vec two_c = cv + cv;
        const Vec lap = (((load(prev + r + z, n) + load(next + r + z, n)) - two_c) +
                         ((load(cur + rm + z, n) + load(cur + rp + z, n)) - two_c)) +
                        ((load(cr + z - 1, n) + load(cr + z + 1, n)) - two_c);
        store(cv + k * lap, o + z, n);
      });
    }
    if (x + 1 >= R) break;
    // Plane x+1's neighbours: x (the current originals), x+1, and x+2 (still unwritten in the
    // channel unless it wraps to plane 0, whose originals are kept in `first`).
    const float* new_prev = cur;
    const float* new_cur = next;
    const int64_t x2 = x + 2;
    if (x2 % R == 0) {
      next = first;
    } else {
      float* s = free_slot(new_prev, new_cur);
      load_plane(x2, s);
      next = s;
    }
    prev = new_prev;
    cur = new_cur;
  }
}

// The reward attractors' pull (docs/cycle.md step 7.9), one channel of one robot at a time, its
// live slots read once per call. Sums: float lanes over runs of kAttractorRun elements, each
// run's lanes added in double in lane order, runs in order: a fixed order for this variant, so
// a robot's numbers do not depend on the batch or the thread count.
constexpr int64_t kAttractorRun = 256;

inline double lanes_in_double(const Vec& v) {
  float tmp[kW];
  v.store(tmp);
  double s = 0.0;
  for (int64_t k = 0; k < kW; ++k) s += tmp[k];
  return s;
}

// The shadow's levels (attractor_to_shadow, attractor_sums, attractor_apply,
// brain/ops/attractor_math.h) as float lanes: AVX2 / AVX-512 sign extensions where the variant
// has them, scalar elsewhere and in tails (every level is exact in a float).
inline Vec load_levels(const int16_t* q, int64_t n) {
#if defined(CPU_CAPABILITY_AVX512)
  if (n == kW) {
    return Vec(_mm512_cvtepi32_ps(
        _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)))));
  }
#elif defined(CPU_CAPABILITY_AVX2)
  if (n == kW) {
    return Vec(_mm256_cvtepi32_ps(
        _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)))));
  }
#endif
  float tmp[kW] = {};
  for (int64_t k = 0; k < n; ++k) tmp[k] = static_cast<float>(q[k]);
  return Vec::loadu(tmp);
}

// max |attractor_shadow_clamp(src[i])| over [0, n): NaN counts as 0 (max(a, m) returns m when
// a is NaN), the clamp applied to the maximum (the same as to every value).
float shadow_max_abs(const float* src, int64_t n) {
  float m = 0.f;
  int64_t i = 0;
#if defined(CPU_CAPABILITY_AVX512)
  __m512 acc = _mm512_setzero_ps();
  for (; i + 16 <= n; i += 16) acc = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(src + i)), acc);
  m = _mm512_reduce_max_ps(acc);
#elif defined(CPU_CAPABILITY_AVX2)
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 acc = _mm256_setzero_ps();
  for (; i + 8 <= n; i += 8) {
    acc = _mm256_max_ps(_mm256_and_ps(magnitude, _mm256_loadu_ps(src + i)), acc);
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  for (float v : lanes) m = std::max(m, v);
#endif
  for (; i < n; ++i) m = std::max(m, std::abs(attractor_shadow_clamp(src[i])));
  return std::min(m, kAttractorShadowMax);
}

// The shadow is written whole at a store and read only by later cycles' sums and moves:
// non-temporal stores where dst is aligned, as the float slot's copy (attractor_pull_kernel.cpp).
float attractor_to_shadow(const float* src, int16_t* dst, int64_t n) {
  const AttractorShadowStep step = attractor_shadow_step(shadow_max_abs(src, n));
  int64_t i = 0;
#if defined(CPU_CAPABILITY_AVX512)
  const __m512 lo = _mm512_set1_ps(-kAttractorShadowMax), hi = _mm512_set1_ps(kAttractorShadowMax);
  const __m512 inverse = _mm512_set1_ps(step.inverse);
  const __m512i top = _mm512_set1_epi32(32767), bottom = _mm512_set1_epi32(-32767);
  const bool aligned = reinterpret_cast<uintptr_t>(dst) % 32 == 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 x = _mm512_loadu_ps(src + i);
    const __m512 y = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, x, _CMP_ORD_Q), x);  // NaN: 0
    const __m512 r = _mm512_mul_ps(_mm512_min_ps(hi, _mm512_max_ps(lo, y)), inverse);
    const __m512i q = _mm512_min_epi32(top, _mm512_max_epi32(bottom, _mm512_cvtps_epi32(r)));
    const __m256i levels = _mm512_cvtepi32_epi16(q);
    __m256i* to = reinterpret_cast<__m256i*>(dst + i);
    aligned ? _mm256_stream_si256(to, levels) : _mm256_storeu_si256(to, levels);
  }
  if (aligned) _mm_sfence();
#elif defined(CPU_CAPABILITY_AVX2)
  const __m256 lo = _mm256_set1_ps(-kAttractorShadowMax), hi = _mm256_set1_ps(kAttractorShadowMax);
  const __m256 inverse = _mm256_set1_ps(step.inverse);
  const __m256i top = _mm256_set1_epi32(32767), bottom = _mm256_set1_epi32(-32767);
  const bool aligned = reinterpret_cast<uintptr_t>(dst) % 16 == 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(src + i);
    const __m256 y = _mm256_and_ps(x, _mm256_cmp_ps(x, x, _CMP_ORD_Q));  // NaN: 0
    const __m256 r = _mm256_mul_ps(_mm256_min_ps(hi, _mm256_max_ps(lo, y)), inverse);
    const __m256i q = _mm256_min_epi32(top, _mm256_max_epi32(bottom, _mm256_cvtps_epi32(r)));
    const __m128i levels =
        _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    __m128i* to = reinterpret_cast<__m128i*>(dst + i);
    aligned ? _mm_stream_si128(to, levels) : _mm_storeu_si128(to, levels);
  }
  if (aligned) _mm_sfence();
#endif
  for (; i < n; ++i) dst[i] = attractor_shadow_level(attractor_shadow_clamp(src[i]), step.inverse);
  return step.scale;
}

// sums[0] = |f|^2, sums[1 + 2l] = f.p_l, sums[2 + 2l] = |p_l|^2 over [0, n), p_l = q_l * scale[l].
// Up to kSumGroup slots walk a run side by side, each in its own two chains (f.p and |p|^2),
// and their lanes are added in double side by side too: every sum is still its slot's own
// chain in its own order (the same bits as one slot at a time), but the chains' latencies
// overlap instead of following one another. One slot at a time, the sums were bound by those
// latencies (two chains of 16 FMAs a run, then two of 16 dependent double additions), not by
// the bank's bytes: 1.7x the move's time for fewer bytes read (R = 32, eight slots).
constexpr int64_t kSumGroup = 4;

// sums[j] += the lanes of v[j] added in double in lane order (lanes_in_double), the N sums
// side by side.
template <int64_t N>
inline void add_lanes_in_double(const Vec (&v)[N], double* sums) {
  float tmp[N][kW];
  double s[N] = {};
  for (int64_t j = 0; j < N; ++j) v[j].store(tmp[j]);
  for (int64_t k = 0; k < kW; ++k)
    for (int64_t j = 0; j < N; ++j) s[j] += tmp[j][k];
  for (int64_t j = 0; j < N; ++j) sums[j] += s[j];
}

// One run of `len` values of f against G slots' levels (q[j] already at the run): sums[2j] +=
// f.q_j, sums[2j + 1] += |q_j|^2.
template <int64_t G>
inline void attractor_sums_group(const float* f, const int16_t* const* q, int64_t len,
                                 double* sums) {
  Vec acc[2 * G];
  for (Vec& a : acc) a = Vec(0.f);
  for_vectors(len, [&](int64_t i, int64_t m) {
    const Vec x = load(f + i, m);
    for (int64_t j = 0; j < G; ++j) {
      const Vec y = load_levels(q[j] + i, m);
      acc[2 * j] = acc[2 * j] + x * y;
      acc[2 * j + 1] = acc[2 * j + 1] + y * y;
    }
  });
  add_lanes_in_double(acc, sums);
}

void attractor_sums(const float* f, const int16_t* const* q, const float* scale, int64_t live,
                    int64_t n, double* sums) {
  for (int64_t k = 0; k < 1 + 2 * live; ++k) sums[k] = 0.0;
  for (int64_t r0 = 0; r0 < n; r0 += kAttractorRun) {
    const int64_t len = std::min(kAttractorRun, n - r0);
    Vec ff(0.f);
    for_vectors(len, [&](int64_t i, int64_t m) {
      const Vec x = load(f + r0 + i, m);
      ff = ff + x * x;
    });
    sums[0] += lanes_in_double(ff);
    // The run of f stays in L1 while every slot's run streams past it.
    const int16_t* run_q[kSumGroup];
    for (int64_t l0 = 0; l0 < live; l0 += kSumGroup) {
      const int64_t g = std::min(kSumGroup, live - l0);
      for (int64_t j = 0; j < g; ++j) run_q[j] = q[l0 + j] + r0;
      double* group_sums = sums + 1 + 2 * l0;
      // (the group's size a template argument: its chains unrolled, held in registers)
      constexpr void (*kGroups[])(const float*, const int16_t* const*, int64_t, double*) = {
          &attractor_sums_group<1>, &attractor_sums_group<2>, &attractor_sums_group<3>,
          &attractor_sums_group<4>};
      static_assert(static_cast<int64_t>(std::size(kGroups)) == kSumGroup, "a walk per group size");
      kGroups[g - 1](f + r0, run_q, len, group_sums);
    }
  }
  for (int64_t l = 0; l < live; ++l) {
    const double s = scale[l];
    sums[1 + 2 * l] *= s;
    sums[2 + 2 * l] *= s * s;
  }
}

// Stores whole vectors with non-temporal stores where p is aligned to one: the pull writes the
// field out of place and whole, and the field is next read in the following cycle, after the
// bank's reads (64 MiB at R = 32) have pushed it out of the caches anyway, so fetching the old
// lines first (what an ordinary store does) is wasted traffic: 8 MiB a cycle at R = 32.
inline void store_streaming(const Vec& v, float* p, int64_t n, bool aligned) {
#if defined(CPU_CAPABILITY_AVX512)
  if (aligned && n == kW) return _mm512_stream_ps(p, v);
#elif defined(CPU_CAPABILITY_AVX2)
  if (aligned && n == kW) return _mm256_stream_ps(p, v);
#endif
  store(v, p, n);
}

// out[i] = f[i] + sum_l coef[l] (q_l[i] * scale[l] - f[i]), the slots' terms added in slot order;
// L > 0 slots known when compiled (their pointers and factors held in registers, the slot loop
// unrolled), L = 0 for `live` slots counted at run time. The same operations either way.
template <int64_t L>
inline void apply_slots(float* out, const float* f, const int16_t* const* q, const float* scale,
                        const float* coef, int64_t live, int64_t n, bool aligned) {
  constexpr int64_t kFixed = L > 0 ? L : 1;
  const int16_t* qs[kFixed];
  Vec sc[kFixed], cf[kFixed];
  if constexpr (L > 0)
    for (int64_t l = 0; l < L; ++l) qs[l] = q[l], sc[l] = Vec(scale[l]), cf[l] = Vec(coef[l]);
  for_vectors(n, [&](int64_t i, int64_t m) {
    const Vec x = load(f + i, m);
    Vec total(0.f);
    if constexpr (L > 0) {
      for (int64_t l = 0; l < L; ++l) {
        const Vec p = load_levels(qs[l] + i, m) * sc[l];
        total = total + (p - x) * cf[l];
      }
    } else {
      for (int64_t l = 0; l < live; ++l) {
        const Vec p = load_levels(q[l] + i, m) * Vec(scale[l]);
        total = total + (p - x) * Vec(coef[l]);
      }
    }
    store_streaming(live == 0 ? x : x + total, out + i, m, aligned);
  });
}

void attractor_apply(float* out, const float* f, const int16_t* const* q, const float* scale,
                     const float* coef, int64_t live, int64_t n) {
  if (live == 0 && out == f) return;
  const bool aligned = reinterpret_cast<uintptr_t>(out) % sizeof(Vec) == 0 && out != f;
  // the walk for `live` slots known when compiled (1-8), else the one that counts them
  constexpr void (*kWalks[])(float*, const float*, const int16_t* const*, const float*,
                             const float*, int64_t, int64_t, bool) = {
      &apply_slots<0>, &apply_slots<1>, &apply_slots<2>, &apply_slots<3>, &apply_slots<4>,
      &apply_slots<5>, &apply_slots<6>, &apply_slots<7>, &apply_slots<8>};
  const int64_t walk = live < static_cast<int64_t>(std::size(kWalks)) ? live : 0;
  kWalks[walk](out, f, q, scale, coef, live, n, aligned);
#if defined(__SSE2__)
  if (aligned) _mm_sfence();  // the stores are visible to whichever thread reads out next
#endif
}

}  // namespace

extern const FieldStepPasses kPasses;
const FieldStepPasses kPasses = {
#if defined(CPU_CAPABILITY_AVX512)
    "avx512",
#elif defined(CPU_CAPABILITY_AVX2)
    "avx2",
#else
    "default",
#endif
    &pass1_scratch_floats, &ef_stats, &pass1_slab, &pass2_scratch_floats, &pass2_channel,
    &fill_normals, &attractor_sums, &attractor_apply, &attractor_to_shadow};

}  // namespace FIELDBRAIN_ISA_NAMESPACE
}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
