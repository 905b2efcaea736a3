#include "brain/legacy/field_loops.h"

#include <cmath>

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

constexpr int64_t kC = 48;  // content channels
constexpr int64_t kF = 64;  // field channels

// A zero row stands for a zero-padded neighbour: an FMA with it adds +0 to a sum that is never
// -0, which changes no value (field_stencils skips such taps instead).
alignas(64) const float kZeroRow[kC] = {};

// ATen's scalar sigmoid (the path a strided 4-channel slice takes): 1 / (1 + exp(-a)).
inline float sigmoid_scalar(float a) { return 1.0f / (1.0f + std::exp(-a)); }

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
    for (int64_t j = 0; j < 32; ++j) o[j] = c[j] * scale[j & 3];
    // working memory: new_temporal * 0.85 + momentum, momentum[j] = new_temporal[j-1] * 0.15
    float prev = c[32] * temporal;
    o[32] = prev * 0.85f + 0.0f;
    for (int64_t j = 33; j < kC; ++j) {
      const float t = c[j] * temporal;
      o[j] = t * 0.85f + prev * 0.15f;
      prev = t;
    }
    if (noise != nullptr) {
      const float w2 = waves[v] * 2.0f;
      const float* n = noise + v * kC;
      for (int64_t j = 0; j < kC; ++j) o[j] = o[j] + ((n[j] * sr) + w2) * idr;
    }
  }
}

FIELDBRAIN_LEGACY_LOOPS_SIMD void learned_diffusion_fused(const float* content,
                                                          const float* strengths, int64_t R,
                                                          float* out) {
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
      }
}

FIELDBRAIN_LEGACY_LOOPS_SIMD void plastic_drive(const float* content, const float* field,
                                                int64_t V, float* out) {
  for (int64_t v = 0; v < V; ++v) {
    const float p0 = sigmoid_scalar(field[v * kF + kC + 12]);
    const float* c = content + v * kC;
    float* o = out + v * kC;
    for (int64_t j = 0; j < kC; ++j) o[j] = c[j] * p0;
  }
}

FIELDBRAIN_LEGACY_LOOPS_SIMD EvolveTail coupling_and_dynamics(
    const float* content, const float* activation, const float* field, int64_t R,
    double self_modification, double exploration, const float* resource_terms,
    double error_weight, float* out) {
  EvolveTail tail;
  const auto s = static_cast<float>(self_modification);
  const auto ex = static_cast<float>(exploration);
  const auto keep = static_cast<float>(0.95), step = static_cast<float>(1 - 0.95);
  const auto w_base = static_cast<float>(1 - error_weight), w_mod = static_cast<float>(error_weight);
  float max_abs = 0.0f;
  bool nan = false;
  alignas(64) float acc[kC];
  for (int64_t x = 0; x < R; ++x)
    for (int64_t y = 0; y < R; ++y)
      for (int64_t z = 0; z < R; ++z) {
        const int64_t v = (x * R + y) * R + z;
        const float* d = field + v * kF + kC;
        const float* b = content + v * kC;
        float* o = out + v * kF;
        // neighbour_sum(activation, 0.1): 26 FMAs in (dx, dy, dz) order
        for (int64_t c = 0; c < kC; ++c) acc[c] = 0.0f;
        for (int dx = -1; dx <= 1; ++dx)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dz = -1; dz <= 1; ++dz) {
              if (dx == 0 && dy == 0 && dz == 0) continue;
              const int64_t nx = x + dx, ny = y + dy, nz = z + dz;
              const bool inside = nx >= 0 && nx < R && ny >= 0 && ny < R && nz >= 0 && nz < R;
              const float* n = inside ? activation + ((nx * R + ny) * R + nz) * kC : kZeroRow;
              for (int64_t c = 0; c < kC; ++c) acc[c] = __builtin_fmaf(0.1f, n[c], acc[c]);
            }
        const float avg_weight = ((((0.0f + d[8]) + d[9]) + d[10]) + d[11]) / 4.0f;
        const float p1 = sigmoid_scalar(d[13]);
        double abs_sum = 0.0, sum = 0.0;
        int count_small = 0;
        for (int64_t c = 0; c < kC; ++c) {
          const float influence = acc[c] * avg_weight;
          const float r = b[c] + influence * p1;
          o[c] = r;
          const float a = std::fabs(r);
          abs_sum += a;
          sum += r;
          count_small += a < 0.1f ? 1 : 0;
          max_abs = a > max_abs ? a : max_abs;
          nan |= r != r;
        }
        // _evolve_dynamics: energy, unbiased variance (two passes, double), sparsity
        const double mean = sum / static_cast<double>(kC);
        double sq = 0.0;
        for (int64_t c = 0; c < kC; ++c) {
          const double dv = static_cast<double>(o[c]) - mean;
          sq += dv * dv;
        }
        const auto energy = static_cast<float>(abs_sum / static_cast<double>(kC));
        const auto variance = static_cast<float>(sq / static_cast<double>(kC - 1));
        const float sparsity = static_cast<float>(count_small) / 48.0f;
        float update[16] = {};
        update[0] = (-energy) * s;
        update[4] = variance * s;
        update[8] = (sparsity * s) * 0.5f;
        update[12] = (((energy * ex) - 0.5f) * s) * 0.5f;
        float* od = o + kC;
        const float* t = resource_terms != nullptr ? resource_terms + v * 12 : nullptr;
        for (int k = 0; k < 16; ++k) {
          float base = d[k] * keep + update[k] * step;
          if (t != nullptr) {
            // allocate_field_resources: 0.9 * base + the mask term (channels 8-11 unchanged)
            const float modulated = k < 8 ? base * 0.9f + t[k] : (k < 12 ? base : base * 0.9f + t[k - 4]);
            base = base * w_base + modulated * w_mod;
          }
          nan |= base != base;
          od[k] = base < -5.0f ? -5.0f : (base > 5.0f ? 5.0f : base);
        }
      }
  tail.max_abs_content = max_abs;
  tail.has_nan = nan;
  return tail;
}

FIELDBRAIN_LEGACY_LOOPS_SIMD double dot_double(const float* __restrict a,
                                               const float* __restrict b, int64_t n) {
  // eight partial sums (two AVX registers of doubles; a float product is exact in double).
  // Written with intrinsics: GCC vectorises the plain loop 2 doubles wide, and this walk
  // streams every reward attractor once per cycle.
  double s[8] = {};
  int64_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  __m256d s0 = _mm256_setzero_pd(), s1 = _mm256_setzero_pd();
  for (; i + 8 <= n; i += 8) {
    const __m256 va = _mm256_loadu_ps(a + i), vb = _mm256_loadu_ps(b + i);
    s0 = _mm256_add_pd(s0, _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(va)),
                                         _mm256_cvtps_pd(_mm256_castps256_ps128(vb))));
    s1 = _mm256_add_pd(s1, _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(va, 1)),
                                         _mm256_cvtps_pd(_mm256_extractf128_ps(vb, 1))));
  }
  _mm256_storeu_pd(s, s0);
  _mm256_storeu_pd(s + 4, s1);
#else
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) s[j] += static_cast<double>(a[i + j]) * b[i + j];
#endif
  for (; i < n; ++i) s[0] += static_cast<double>(a[i]) * b[i];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
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

FIELDBRAIN_LEGACY_LOOPS_SIMD AbsStats abs_stats(const float* __restrict x, int64_t n) {
  // eight lanes of partial sums and maxima keep the loop vectorised
  double s[8] = {};
  float mx[8] = {};
  int nan[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) {
      const float a = std::fabs(x[i + j]);
      s[j] += a;
      mx[j] = a > mx[j] ? a : mx[j];
      nan[j] |= a != a;
    }
  for (; i < n; ++i) {
    const float a = std::fabs(x[i]);
    s[0] += a;
    mx[0] = a > mx[0] ? a : mx[0];
    nan[0] |= a != a;
  }
  AbsStats st;
  st.sum = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  for (int j = 0; j < 8; ++j) {
    st.max = mx[j] > st.max ? mx[j] : st.max;
    st.has_nan |= nan[j] != 0;
  }
  return st;
}

FIELDBRAIN_LEGACY_LOOPS_SIMD void channel_sums(const float* x, int64_t V, int64_t C,
                                               int64_t abs_channels, double* sums,
                                               double* abs_sum) {
  double acc[64] = {};
  double a = 0.0;
  for (int64_t v = 0; v < V; ++v) {
    const float* r = x + v * C;
    for (int64_t c = 0; c < C; ++c) acc[c] += r[c];
    for (int64_t c = 0; c < abs_channels; ++c) a += std::fabs(r[c]);
  }
  for (int64_t c = 0; c < C; ++c) sums[c] = acc[c];
  if (abs_sum != nullptr) *abs_sum = a;
}

FIELDBRAIN_LEGACY_LOOPS_SIMD Moments content_moments(const float* x, int64_t V, int64_t C,
                                                     int64_t channels) {
  Moments m;
  double abs_acc[64] = {}, acc[64] = {};
  for (int64_t v = 0; v < V; ++v) {
    const float* r = x + v * C;
    for (int64_t c = 0; c < channels; ++c) {
      abs_acc[c] += std::fabs(r[c]);
      acc[c] += r[c];
    }
  }
  for (int64_t c = 0; c < channels; ++c) m.abs_sum += abs_acc[c], m.sum += acc[c];
  m.has_nan = std::isnan(m.sum);
  const double mean = m.sum / static_cast<double>(V * channels);
  double sq[64] = {};
  for (int64_t v = 0; v < V; ++v) {
    const float* r = x + v * C;
    for (int64_t c = 0; c < channels; ++c) {
      const double dv = static_cast<double>(r[c]) - mean;
      sq[c] += dv * dv;
    }
  }
  for (int64_t c = 0; c < channels; ++c) m.sq_dev += sq[c];
  return m;
}

}  // namespace fieldbrain::legacy
