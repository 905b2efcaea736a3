#include "brain/legacy/field_loops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "brain/legacy/aten_sums.h"
#include "brain/legacy/exact_tanh_simd.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace fieldbrain::legacy {

namespace {

// AVX2 for the 48-channel inner loops; FMA only where the original's conv3d has one (explicit
// __builtin_fmaf): the library builds with -ffp-contract=off, so no a * b + c is contracted.
#if defined(__x86_64__) && defined(__GNUC__)
#define FIELDBRAIN_LEGACY_LOOPS_SIMD __attribute__((target("avx2,fma")))
#else
#define FIELDBRAIN_LEGACY_LOOPS_SIMD
#endif

constexpr int64_t kC = 48;        // content channels
constexpr int64_t kF = 64;        // field channels
constexpr int64_t kBlock = 4096;  // values per block of the streamed sums (on the stack)

// A zero row stands for a zero-padded neighbour: an FMA with it adds +0 to a sum that is never
// -0, which changes no value (field_stencils skips such taps instead).
alignas(64) const float kZeroRow[kC] = {};

// ATen's scalar sigmoid (the path a strided 4-channel slice takes): 1 / (1 + exp(-a)).
inline float sigmoid_scalar(float a) { return 1.0f / (1.0f + std::exp(-a)); }

// acc[c] = fma(0.1, taps[25][c], ... fma(0.1, taps[0][c], 0)) for the 48 content channels: the
// chain of field_stencils' neighbour_sum, its six vectors of accumulators kept in registers.
FIELDBRAIN_LEGACY_LOOPS_SIMD inline void neighbour_fma_chain(const float* const (&taps)[26],
                                                             float* acc) {
#if defined(__x86_64__) && defined(__GNUC__)
  const __m256 w = _mm256_set1_ps(0.1f);
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
  for (const float* n : taps) {
    a0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(n), a0);
    a1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(n + 8), a1);
    a2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(n + 16), a2);
    a3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(n + 24), a3);
    a4 = _mm256_fmadd_ps(w, _mm256_loadu_ps(n + 32), a4);
    a5 = _mm256_fmadd_ps(w, _mm256_loadu_ps(n + 40), a5);
  }
  _mm256_storeu_ps(acc, a0);
  _mm256_storeu_ps(acc + 8, a1);
  _mm256_storeu_ps(acc + 16, a2);
  _mm256_storeu_ps(acc + 24, a3);
  _mm256_storeu_ps(acc + 32, a4);
  _mm256_storeu_ps(acc + 40, a5);
#else
  for (int64_t c = 0; c < kC; ++c) acc[c] = 0.0f;
  for (const float* n : taps)
    for (int64_t c = 0; c < kC; ++c) acc[c] = __builtin_fmaf(0.1f, n[c], acc[c]);
#endif
}

// neighbour_fma_chain of two voxels at once: the same FMAs in the same order for each, the two
// chains interleaved so that one's FMA latency hides under the other's.
FIELDBRAIN_LEGACY_LOOPS_SIMD inline void neighbour_fma_chains(const float* const (&taps)[2][26],
                                                              float* acc0, float* acc1) {
#if defined(__x86_64__) && defined(__GNUC__)
  const __m256 w = _mm256_set1_ps(0.1f);
  __m256 a[2][6];
  for (auto& row : a)
    for (__m256& v : row) v = _mm256_setzero_ps();
  for (int t = 0; t < 26; ++t)
    for (int k = 0; k < 2; ++k) {
      const float* n = taps[k][t];
      for (int j = 0; j < 6; ++j) a[k][j] = _mm256_fmadd_ps(w, _mm256_loadu_ps(n + 8 * j), a[k][j]);
    }
  for (int j = 0; j < 6; ++j) {
    _mm256_storeu_ps(acc0 + 8 * j, a[0][j]);
    _mm256_storeu_ps(acc1 + 8 * j, a[1][j]);
  }
#else
  neighbour_fma_chain(taps[0], acc0);
  neighbour_fma_chain(taps[1], acc1);
#endif
}

// The running max of |x| over many values, lane by lane: each lane keeps `a > m ? a : m` (a NaN
// is never taken, as in the scalar loop), and the lanes are folded the same way at the end;
// a maximum of non-NaN floats does not depend on the order it is taken in.
struct MaxLanes {
#if defined(__x86_64__) && defined(__GNUC__)
  __m256 lanes;
  FIELDBRAIN_LEGACY_LOOPS_SIMD MaxLanes() : lanes(_mm256_setzero_ps()) {}
  FIELDBRAIN_LEGACY_LOOPS_SIMD void add(__m256 a) { lanes = _mm256_max_ps(a, lanes); }
  FIELDBRAIN_LEGACY_LOOPS_SIMD float result() const {
    alignas(32) float l[8];
    _mm256_store_ps(l, lanes);
    float m = 0.0f;
    for (float a : l) m = a > m ? a : m;
    return m;
  }
#else
  float m = 0.0f;
  void add_scalar(float a) { m = a > m ? a : m; }
  float result() const { return m; }
#endif
};

// The coupled content of one voxel, b + (acc * avg_weight) * p1, into o, its |values| into
// a_line and `vmax`; returns how many |values| are below 0.1.
FIELDBRAIN_LEGACY_LOOPS_SIMD inline int coupled_values(const float* acc, float avg_weight,
                                                      float p1, const float* b, float* o,
                                                      float* a_line, MaxLanes& vmax) {
#if defined(__x86_64__) && defined(__GNUC__)
  const __m256 aw = _mm256_set1_ps(avg_weight), vp1 = _mm256_set1_ps(p1);
  const __m256 sign = _mm256_set1_ps(-0.0f), tenth = _mm256_set1_ps(0.1f);
  int count_small = 0;
  for (int64_t c = 0; c < kC; c += 8) {
    const __m256 influence = _mm256_mul_ps(_mm256_loadu_ps(acc + c), aw);
    const __m256 r = _mm256_add_ps(_mm256_loadu_ps(b + c), _mm256_mul_ps(influence, vp1));
    _mm256_storeu_ps(o + c, r);
    const __m256 a = _mm256_andnot_ps(sign, r);
    _mm256_storeu_ps(a_line + c, a);
    count_small += __builtin_popcount(
        static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(a, tenth, _CMP_LT_OQ))));
    vmax.add(a);
  }
  return count_small;
#else
  int count_small = 0;
  for (int64_t c = 0; c < kC; ++c) {
    const float influence = acc[c] * avg_weight;
    const float r = b[c] + influence * p1;
    o[c] = r;
    const float a = std::fabs(r);
    a_line[c] = a;
    count_small += a < 0.1f ? 1 : 0;
    vmax.add_scalar(a);
  }
  return count_small;
#endif
}

// The 16 dynamics of one voxel: d * keep + update * step (update zero but in channels 0, 4, 8,
// 12), blended with the error field's resource terms t when t is not null (allocate_field_
// resources: 0.9 * base + the mask term, channels 8-11 unchanged; weights w_base, w_mod), then
// clamped to [-5, 5] with a NaN kept. Returns whether a NaN came out.
struct DynamicsWeights {
  float keep, step, w_base, w_mod;
};
FIELDBRAIN_LEGACY_LOOPS_SIMD inline bool dynamics_update(const float* d, const float (&update)[16],
                                                        const float* t, DynamicsWeights w,
                                                        float* od) {
#if defined(__x86_64__) && defined(__GNUC__)
  const __m256 keep = _mm256_set1_ps(w.keep), step = _mm256_set1_ps(w.step);
  const __m256 lo_min = _mm256_set1_ps(-5.0f), hi_max = _mm256_set1_ps(5.0f);
  bool nan = false;
  for (int h = 0; h < 2; ++h) {
    __m256 base = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(d + 8 * h), keep),
                                _mm256_mul_ps(_mm256_loadu_ps(update + 8 * h), step));
    if (t != nullptr) {
      const __m256 nine = _mm256_set1_ps(0.9f);
      // k 0-7: t[k]; k 12-15: t[k - 4], i.e. lanes 4-7 of t + 4; k 8-11 keep base
      const __m256 terms = _mm256_loadu_ps(t + 4 * h);
      __m256 modulated = _mm256_add_ps(_mm256_mul_ps(base, nine), terms);
      if (h == 1) modulated = _mm256_blend_ps(base, modulated, 0xF0);
      base = _mm256_add_ps(_mm256_mul_ps(base, _mm256_set1_ps(w.w_base)),
                           _mm256_mul_ps(modulated, _mm256_set1_ps(w.w_mod)));
    }
    nan |= _mm256_movemask_ps(_mm256_cmp_ps(base, base, _CMP_UNORD_Q)) != 0;
    __m256 r = _mm256_blendv_ps(base, lo_min, _mm256_cmp_ps(base, lo_min, _CMP_LT_OQ));
    r = _mm256_blendv_ps(r, hi_max, _mm256_cmp_ps(base, hi_max, _CMP_GT_OQ));
    _mm256_storeu_ps(od + 8 * h, r);
  }
  return nan;
#else
  bool nan = false;
  for (int k = 0; k < 16; ++k) {
    float base = d[k] * w.keep + update[k] * w.step;
    if (t != nullptr) {
      const float modulated =
          k < 8 ? base * 0.9f + t[k] : (k < 12 ? base : base * 0.9f + t[k - 4]);
      base = base * w.w_base + modulated * w.w_mod;
    }
    nan |= base != base;
    od[k] = base < -5.0f ? -5.0f : (base > 5.0f ? 5.0f : base);
  }
  return nan;
#endif
}

// One z-line of the coupling walk (voxels (x, y, 0..R-1)).
struct CouplingLine {
  const float *content, *activation, *field;
  float* out;
  int64_t R, x, y;
  const int64_t* tap_offsets;  // an inner voxel's 26 neighbours, chain order, in floats

  // the 26 neighbours of voxel z in (dx, dy, dz) order, a zero row outside the field
  void taps(int64_t z, const float* (&t)[26]) const {
    const int64_t v = (x * R + y) * R + z;
    if (x > 0 && x + 1 < R && y > 0 && y + 1 < R && z > 0 && z + 1 < R) {
      const float* centre = activation + v * kC;
      for (int k = 0; k < 26; ++k) t[k] = centre + tap_offsets[k];
      return;
    }
    int k = 0;
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz) {
          if (dx == 0 && dy == 0 && dz == 0) continue;
          const int64_t nx = x + dx, ny = y + dy, nz = z + dz;
          const bool inside = nx >= 0 && nx < R && ny >= 0 && ny < R && nz >= 0 && nz < R;
          t[k++] = inside ? activation + ((nx * R + ny) * R + nz) * kC : kZeroRow;
        }
  }
  // voxel z's coupled content from its neighbour sum acc (coupled_values); its |values| into
  // line_abs's row z
  FIELDBRAIN_LEGACY_LOOPS_SIMD int couple(int64_t z, const float* acc, float* line_abs,
                                          MaxLanes& vmax) const {
    const int64_t v = (x * R + y) * R + z;
    const float* d = field + v * kF + kC;
    const float avg_weight = ((((0.0f + d[8]) + d[9]) + d[10]) + d[11]) / 4.0f;
    const float p1 = sigmoid_scalar(d[13]);
    // (a NaN here shows as a NaN energy below: no per-value test)
    return coupled_values(acc, avg_weight, p1, content + v * kC, out + v * kF,
                          line_abs + z * kC, vmax);
  }
};

}  // namespace

FIELDBRAIN_LEGACY_LOOPS_SIMD void decay_spontaneous(const float* field, int64_t V,
                                                    double global_decay, double decay_multiplier,
                                                    const float* noise, double spontaneous_rate,
                                                    const float* waves, double internal_drive,
                                                    float* out) {
  const auto gd = static_cast<float>(global_decay), dm = static_cast<float>(decay_multiplier);
  const auto sr = static_cast<float>(spontaneous_rate), idr = static_cast<float>(internal_drive);
  for (int64_t v = 0; v < V; ++v) {
    const float* c = field + v * kF;
    const float* d = c + kC;
    float* o = out + v * kC;
    float scale[4];
    float sum = 0.0f;  // mean(decay_rates, -1): a sequential float sum, / 4
    for (int k = 0; k < 4; ++k) {
      const float dr = sigmoid_scalar(d[k]);
      scale[k] = (dr * gd) * dm;
      sum = sum + dr;
    }
    const float temporal = ((sum / 4.0f) * gd) * dm;
#if defined(__x86_64__) && defined(__GNUC__)
    // the same values, eight at a time
    const __m256 sc = _mm256_setr_ps(scale[0], scale[1], scale[2], scale[3], scale[0], scale[1],
                                     scale[2], scale[3]);
    __m256 r[6];
    for (int j = 0; j < 4; ++j) r[j] = _mm256_mul_ps(_mm256_loadu_ps(c + 8 * j), sc);
    const __m256 t = _mm256_set1_ps(temporal);
    const __m256 k85 = _mm256_set1_ps(0.85f), k15 = _mm256_set1_ps(0.15f);
    for (int j = 4; j < 6; ++j) {
      const __m256 now = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(c + 8 * j), t), k85);
      __m256 before = _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(c + 8 * j - 1), t), k15);
      if (j == 4) before = _mm256_blend_ps(before, _mm256_setzero_ps(), 0x01);  // o[32]: + 0
      r[j] = _mm256_add_ps(now, before);
    }
    if (noise != nullptr) {
      const __m256 w2 = _mm256_set1_ps(waves[v] * 2.0f);
      const __m256 vsr = _mm256_set1_ps(sr), vidr = _mm256_set1_ps(idr);
      const float* n = noise + v * kC;
      for (int j = 0; j < 6; ++j)
        r[j] = _mm256_add_ps(
            r[j], _mm256_mul_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(n + 8 * j), vsr), w2),
                                vidr));
    }
    for (int j = 0; j < 6; ++j) _mm256_storeu_ps(o + 8 * j, r[j]);
    continue;
#endif
    for (int64_t j = 0; j < 32; ++j) o[j] = c[j] * scale[j & 3];
    // working memory: new_temporal * 0.85 + momentum, momentum[j] = new_temporal[j-1] * 0.15
    // (each new_temporal value made where it is read: the same float, and no carried value)
    o[32] = (c[32] * temporal) * 0.85f + 0.0f;
    for (int64_t j = 33; j < kC; ++j)
      o[j] = (c[j] * temporal) * 0.85f + (c[j - 1] * temporal) * 0.15f;
    if (noise != nullptr) {
      const float w2 = waves[v] * 2.0f;
      const float* n = noise + v * kC;
      for (int64_t j = 0; j < kC; ++j) o[j] = o[j] + ((n[j] * sr) + w2) * idr;
    }
  }
}

FIELDBRAIN_LEGACY_LOOPS_SIMD void learned_diffusion_fused(const float* content,
                                                          const float* strengths, int64_t R,
                                                          const float* field, float* out,
                                                          float* drive, bool activate) {
  for (int64_t x = 0; x < R; ++x)
    for (int64_t y = 0; y < R; ++y)
      for (int64_t z = 0; z < R; ++z) {
        const int64_t v = (x * R + y) * R + z;
        const float* s = strengths + v * 4;
        const float* a0 = content + v * kC;
        const float* nb[3][2] = {
            {x > 0 ? a0 - R * R * kC : kZeroRow, x + 1 < R ? a0 + R * R * kC : kZeroRow},
            {y > 0 ? a0 - R * kC : kZeroRow, y + 1 < R ? a0 + R * kC : kZeroRow},
            {z > 0 ? a0 - kC : kZeroRow, z + 1 < R ? a0 + kC : kZeroRow}};
        float* o = out + v * kC;
        // the coupling's tanh argument: content * sigmoid(plasticity[0])
        const float p0 = sigmoid_scalar(field[v * kF + kC + 12]);
        float* dr = drive + v * kC;
#if defined(__x86_64__) && defined(__GNUC__)
        // the 48 sums in six vectors of registers through the three axes (the same FMAs,
        // products and sums as the scalar loop below, value by value)
        {
          const __m256 one = _mm256_set1_ps(1.0f), minus_two = _mm256_set1_ps(-2.0f);
          const __m256 zero = _mm256_setzero_ps();
          __m256 acc[6], centre[6];
          for (int j = 0; j < 6; ++j) acc[j] = centre[j] = _mm256_loadu_ps(a0 + 8 * j);
          for (int a = 0; a < 3; ++a) {
            const float* m = nb[a][0];
            const float* p = nb[a][1];
            const __m256 sa = _mm256_set1_ps(s[a]);
            for (int j = 0; j < 6; ++j) {
              __m256 lap = _mm256_fmadd_ps(one, _mm256_loadu_ps(m + 8 * j), zero);
              lap = _mm256_fmadd_ps(minus_two, centre[j], lap);
              lap = _mm256_fmadd_ps(one, _mm256_loadu_ps(p + 8 * j), lap);
              acc[j] = _mm256_add_ps(acc[j], _mm256_mul_ps(lap, sa));
            }
          }
          const __m256 vp0 = _mm256_set1_ps(p0);
          for (int j = 0; j < 6; ++j) {
            _mm256_storeu_ps(o + 8 * j, acc[j]);
            const __m256 arg = _mm256_mul_ps(acc[j], vp0);
            _mm256_storeu_ps(dr + 8 * j, activate ? exact_tanh_detail::tanh8(arg) : arg);
          }
          continue;
        }
#endif
        for (int64_t c = 0; c < kC; ++c) o[c] = a0[c];
        for (int a = 0; a < 3; ++a) {
          const float* m = nb[a][0];
          const float* p = nb[a][1];
          const float sa = s[a];
          for (int64_t c = 0; c < kC; ++c) {
            float lap = __builtin_fmaf(1.0f, m[c], 0.0f);
            lap = __builtin_fmaf(-2.0f, a0[c], lap);
            lap = __builtin_fmaf(1.0f, p[c], lap);
            const float term = lap * sa;
            o[c] = o[c] + term;
          }
        }
        for (int64_t c = 0; c < kC; ++c) dr[c] = o[c] * p0;
      }
}

FIELDBRAIN_LEGACY_LOOPS_SIMD EvolveTail
coupling_and_dynamics(const float* content, const float* activation, const float* field, int64_t R,
                      double self_modification, double exploration, const float* resource_terms,
                      double error_weight, float* out) {
  EvolveTail tail;
  const auto s = static_cast<float>(self_modification);
  const auto ex = static_cast<float>(exploration);
  const auto keep = static_cast<float>(0.95), step = static_cast<float>(1 - 0.95);
  const DynamicsWeights weights{keep, step, static_cast<float>(1 - error_weight),
                                static_cast<float>(error_weight)};
  bool nan = false;
  alignas(64) float acc[kC], acc_next[kC];
  MaxLanes vmax;
  // one z-line at a time: its coupled content first, then its per-voxel moments as ATen
  // reduces them (aten_sums.h), then its dynamics
  thread_local std::vector<float> line_abs, line_energy, line_var;
  thread_local std::vector<int> line_small;
  line_abs.resize(static_cast<size_t>(R * kC));
  line_energy.resize(static_cast<size_t>(R));
  line_var.resize(static_cast<size_t>(R));
  line_small.resize(static_cast<size_t>(R));
  // an inner voxel's 26 neighbours, in the chain's (dx, dy, dz) order, as offsets (no bounds)
  int64_t tap_offsets[26];
  {
    int t = 0;
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz)
          if (dx != 0 || dy != 0 || dz != 0) tap_offsets[t++] = ((dx * R + dy) * R + dz) * kC;
  }
  for (int64_t x = 0; x < R; ++x)
    for (int64_t y = 0; y < R; ++y) {
      const int64_t v0 = (x * R + y) * R;
      // neighbour_sum(activation, 0.1): 26 FMAs in (dx, dy, dz) order, two voxels at a time
      const CouplingLine line{content, activation, field, out, R, x, y, tap_offsets};
      int64_t zc = 0;
      for (; zc + 2 <= R; zc += 2) {
        const float* taps[2][26];
        line.taps(zc, taps[0]);
        line.taps(zc + 1, taps[1]);
        neighbour_fma_chains(taps, acc, acc_next);
        line_small[static_cast<size_t>(zc)] = line.couple(zc, acc, line_abs.data(), vmax);
        line_small[static_cast<size_t>(zc + 1)] =
            line.couple(zc + 1, acc_next, line_abs.data(), vmax);
      }
      if (zc < R) {  // an odd line's last voxel alone
        const float* taps[26];
        line.taps(zc, taps);
        neighbour_fma_chain(taps, acc);
        line_small[static_cast<size_t>(zc)] = line.couple(zc, acc, line_abs.data(), vmax);
      }
      // _evolve_dynamics: energy = mean(|c|, -1), variance = var(c, -1), sparsity
      aten_row_sums(line_abs.data(), R, kC, kC, line_energy.data());
      aten_row_vars(out + v0 * kF, R, kF, kC, line_var.data());
      for (int64_t z = 0; z < R; ++z) {
        const int64_t v = v0 + z;
        const float* d = field + v * kF + kC;
        float* od = out + v * kF + kC;
        const float energy = line_energy[static_cast<size_t>(z)] / 48.0f;
        nan |= energy != energy;  // a NaN among the voxel's content
        const float variance = line_var[static_cast<size_t>(z)];
        const float sparsity = static_cast<float>(line_small[static_cast<size_t>(z)]) / 48.0f;
        alignas(32) float update[16] = {};
        update[0] = (-energy) * s;
        update[4] = variance * s;
        update[8] = (sparsity * s) * 0.5f;
        update[12] = (((energy * ex) - 0.5f) * s) * 0.5f;
        const float* t = resource_terms != nullptr ? resource_terms + v * 12 : nullptr;
        nan |= dynamics_update(d, update, t, weights, od);
      }
    }
  tail.max_abs_content = vmax.result();
  tail.has_nan = nan;
  return tail;
}

FIELDBRAIN_LEGACY_LOOPS_SIMD void attractor_term(float* __restrict total,
                                                 const float* __restrict pattern,
                                                 const float* __restrict field, int64_t n,
                                                 float strength, float valence, float scale,
                                                 float k, bool first) {
  if (first) {
    for (int64_t i = 0; i < n; ++i)
      total[i] = ((((pattern[i] - field[i]) * strength) * valence) * scale) * k;
  } else {
    for (int64_t i = 0; i < n; ++i)
      total[i] = total[i] + ((((pattern[i] - field[i]) * strength) * valence) * scale) * k;
  }
}

FIELDBRAIN_LEGACY_LOOPS_SIMD void add_into(float* __restrict x, const float* __restrict t,
                                           int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] + t[i];
}

FIELDBRAIN_LEGACY_LOOPS_SIMD void unit_products(const float* __restrict unit,
                                                const float* __restrict pattern, float norm,
                                                int64_t n, float* __restrict out) {
  for (int64_t i = 0; i < n; ++i) out[i] = unit[i] * (pattern[i] / norm);
}

FIELDBRAIN_LEGACY_LOOPS_SIMD void squares(const float* __restrict x, int64_t n,
                                          float* __restrict out) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] * x[i];
}

FIELDBRAIN_LEGACY_LOOPS_SIMD void divided(const float* __restrict x, float d, int64_t n,
                                          float* __restrict out) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] / d;
}

namespace {

// |x[i] + add| (or |x[i]| with ADD false) of m values into block, x[i] + add back into x, the
// |values| into vmax.
template <bool ADD>
FIELDBRAIN_LEGACY_LOOPS_SIMD inline void abs_block(float* x, float add, int64_t m, float* block,
                                                   MaxLanes& vmax) {
  int64_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  const __m256 sign = _mm256_set1_ps(-0.0f), va = _mm256_set1_ps(add);
  for (; i + 8 <= m; i += 8) {
    __m256 r = _mm256_loadu_ps(x + i);
    if (ADD) {
      r = _mm256_add_ps(r, va);
      _mm256_storeu_ps(x + i, r);
    }
    const __m256 a = _mm256_andnot_ps(sign, r);
    _mm256_storeu_ps(block + i, a);
    vmax.add(a);
  }
  // the tail as one vector more, its missing lanes zero (|x| >= 0 changes no maximum)
  if (i < m) {
    alignas(32) float rest[8] = {};
    for (int64_t k = i; k < m; ++k) {
      const float r = ADD ? x[k] + add : x[k];
      if (ADD) x[k] = r;
      rest[k - i] = block[k] = std::fabs(r);
    }
    vmax.add(_mm256_load_ps(rest));
  }
#else
  for (; i < m; ++i) {
    const float r = ADD ? x[i] + add : x[i];
    if (ADD) x[i] = r;
    block[i] = std::fabs(r);
    vmax.add_scalar(block[i]);
  }
#endif
}

// (live: rows of `row` values; a row not flagged is cleared just before the block that
// reaches it is read, while its lines are being written anyway)
template <bool ADD>
FIELDBRAIN_LEGACY_LOOPS_SIMD AbsStats abs_stats_walk(float* x, float add, int64_t n,
                                                     int64_t row = 0,
                                                     const uint8_t* live = nullptr) {
  AtenRowSum sum(n);
  alignas(64) float block[kBlock];
  MaxLanes vmax;
  int64_t cleared_to = 0;  // rows before this one are done
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t m = std::min(kBlock, n - i0);
    if (live != nullptr) {
      const int64_t last = std::min((i0 + m + row - 1) / row, n / row);
      for (; cleared_to < last; ++cleared_to)
        if (live[cleared_to] == 0)
          std::memset(x + cleared_to * row, 0, sizeof(float) * static_cast<size_t>(row));
    }
    abs_block<ADD>(x + i0, add, m, block, vmax);
    sum.add(block, m);
  }
  AbsStats st;
  st.sum = sum.result();
  st.max = vmax.result();
  st.has_nan = st.sum != st.sum;  // a sum of |x| is NaN exactly when some |x| is
  return st;
}

}  // namespace

AbsStats abs_stats(const float* x, int64_t n) {
  // (ADD false: x is only read)
  return abs_stats_walk<false>(const_cast<float*>(x), 0.0f, n);
}

AbsStats add_and_abs_stats(float* x, float add, int64_t n) {
  return abs_stats_walk<true>(x, add, n);
}

AbsStats add_and_abs_stats(float* x, float add, int64_t n, int64_t row, const uint8_t* live) {
  return abs_stats_walk<true>(x, add, n, row, live);
}

namespace {

// The sequential sum, value by value: the definition the grid steps below must reproduce.
inline double square_sum_sequential(double s, const float* x, int64_t rows, int64_t row_stride,
                                    int64_t channels, double mean) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < channels; ++c) {
      const double d = static_cast<double>(x[r * row_stride + c]) - mean;
      s += d * d;
    }
  return s;
}

#if defined(__x86_64__) && defined(__GNUC__)
// One block of a sequential sum of squares without the sequence. While the running sum s stays
// in one binade [2^e, 2^(e+1)), every double it takes is a multiple of that binade's ulp u, so
// each rounded step fl(s + p) is s + u * round(p / u) (p >= 0: the sum only grows), a tie
// (p / u exactly half an odd integer) excepted, where round-half-even looks at s's last bit.
// So the block's sum is s + u * (the sum of the integers round(p / u)), which adds in any
// order (exactly: integers below 2^53), provided no step leaves the binade, i.e. the block's
// end stays below 2^(e+1) (the steps are monotone). Returns false (s untouched) where that
// does not hold: a tie, a step into the next binade, s not a large enough normal number, or a
// non-finite value; the caller then adds the block value by value.
FIELDBRAIN_LEGACY_LOOPS_SIMD bool square_sum_on_grid(double& s, const float* x, int64_t rows,
                                                     int64_t row_stride, int64_t channels,
                                                     double mean) {
  uint64_t bits;
  std::memcpy(&bits, &s, sizeof bits);
  const auto e = static_cast<int64_t>(bits >> 52);  // s >= 0: no sign bit
  if (e <= 52 + 1 || e >= 2046 || channels % 8 != 0) return false;
  const auto from_exponent = [](int64_t biased) {
    const uint64_t b = static_cast<uint64_t>(biased) << 52;
    double v;
    std::memcpy(&v, &b, sizeof v);
    return v;
  };
  const double u = from_exponent(e - 52), inv_u = from_exponent(2046 + 52 - e),
               top = from_exponent(e + 1);
  const __m256d vmean = _mm256_set1_pd(mean), vinv = _mm256_set1_pd(inv_u);
  const __m256d half = _mm256_set1_pd(0.5), sign = _mm256_set1_pd(-0.0);
  __m256d k0 = _mm256_setzero_pd(), k1 = k0, tie = k0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * row_stride;
    for (int64_t c = 0; c < channels; c += 8) {
      const __m256 v = _mm256_loadu_ps(row + c);
      const __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), vmean);
      const __m256d d1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)), vmean);
      // p / u exactly (a power of two; a p so small that it rounds is far below 1/2)
      const __m256d q0 = _mm256_mul_pd(_mm256_mul_pd(d0, d0), vinv);
      const __m256d q1 = _mm256_mul_pd(_mm256_mul_pd(d1, d1), vinv);
      const __m256d n0 = _mm256_round_pd(q0, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      const __m256d n1 = _mm256_round_pd(q1, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      tie = _mm256_or_pd(
          tie, _mm256_or_pd(
                   _mm256_cmp_pd(_mm256_andnot_pd(sign, _mm256_sub_pd(q0, n0)), half, _CMP_EQ_OQ),
                   _mm256_cmp_pd(_mm256_andnot_pd(sign, _mm256_sub_pd(q1, n1)), half,
                                 _CMP_EQ_OQ)));
      k0 = _mm256_add_pd(k0, n0);
      k1 = _mm256_add_pd(k1, n1);
    }
  }
  if (_mm256_movemask_pd(tie) != 0) return false;
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, _mm256_add_pd(k0, k1));
  const double k = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  // (k < 2^53 whenever the end is below top; a NaN or inf fails the comparison)
  const double end = s + u * k;
  if (!(end < top)) return false;
  s = end;
  return true;
}
#endif

}  // namespace

double ordered_square_sum(double s, const float* x, int64_t rows, int64_t row_stride,
                          int64_t channels, double mean) {
#if defined(__x86_64__) && defined(__GNUC__)
  constexpr int64_t kRowsPerBlock = 4;
  for (int64_t r0 = 0; r0 < rows; r0 += kRowsPerBlock) {
    const int64_t m = std::min(kRowsPerBlock, rows - r0);
    const float* block = x + r0 * row_stride;
    if (!square_sum_on_grid(s, block, m, row_stride, channels, mean))
      s = square_sum_sequential(s, block, m, row_stride, channels, mean);
  }
  return s;
#else
  return square_sum_sequential(s, x, rows, row_stride, channels, mean);
#endif
}

FIELDBRAIN_LEGACY_LOOPS_SIMD ContentSums content_abs_sum_and_var(const float* x, int64_t V,
                                                              int64_t C, int64_t channels) {
  // aten_strided_var's walk (the float mean, then the squared deviations summed in double in
  // memory order: one sequential chain of additions) with channel_abs_sum's blocks taken in
  // its shadow
  const int64_t count = V * channels;
  const auto mean =
      static_cast<double>(aten_strided_sum(x, V, C, channels) / static_cast<float>(count));
  AtenRowSum sum(count);
  alignas(64) float block[kBlock];
  const int64_t per_block = kBlock / channels;
  double squares = 0.0;
  for (int64_t v0 = 0; v0 < V; v0 += per_block) {
    const int64_t m = std::min(per_block, V - v0);
    squares = ordered_square_sum(squares, x + v0 * C, m, C, channels, mean);
    for (int64_t v = 0; v < m; ++v) {
      const float* row = x + (v0 + v) * C;
      for (int64_t c = 0; c < channels; ++c) block[v * channels + c] = std::fabs(row[c]);
    }
    sum.add(block, m * channels);
  }
  ContentSums out;
  out.abs_sum = sum.result();
  out.variance =
      static_cast<float>(squares / static_cast<double>(std::max<int64_t>(0, count - 1)));
  return out;
}

FIELDBRAIN_LEGACY_LOOPS_SIMD float channel_abs_sum(const float* x, int64_t V, int64_t C,
                                                   int64_t channels) {
  AtenRowSum sum(V * channels);
  alignas(64) float block[kBlock];
  const int64_t per_block = kBlock / channels;
  for (int64_t v0 = 0; v0 < V; v0 += per_block) {
    const int64_t m = std::min(per_block, V - v0);
    for (int64_t v = 0; v < m; ++v)
      for (int64_t c = 0; c < channels; ++c)
        block[v * channels + c] = std::fabs(x[(v0 + v) * C + c]);
    sum.add(block, m * channels);
  }
  return sum.result();
}

}  // namespace fieldbrain::legacy
