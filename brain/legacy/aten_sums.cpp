#include "brain/legacy/aten_sums.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace fieldbrain::legacy {

namespace {

// AVX2 for the lane loops (the legacy profile needs AVX2 + FMA: legacy_cpu.h); the library is
// built with -ffp-contract=off, so no product-sum here becomes an FMA.
#if defined(__x86_64__) && defined(__GNUC__)
#define FIELDBRAIN_LEGACY_SUMS_SIMD __attribute__((target("avx2,fma")))
#else
#define FIELDBRAIN_LEGACY_SUMS_SIMD
#endif

// utils::CeilLog2 (1 for x <= 2)
constexpr int64_t ceil_log2(int64_t x) {
  if (x <= 2) return 1;
  return 64 - __builtin_clzll(static_cast<uint64_t>(x - 1));
}

// multi_row_sum's level width: 2^max(4, CeilLog2(size) / 4) rows per level-0 block.
constexpr int64_t level_power(int64_t size) { return std::max<int64_t>(4, ceil_log2(size) / 4); }

// SumKernel's multi_row_sum: K accumulators (of W lanes) per row, `size` rows, row i's k-th
// accumulator adding the W values at load(i, k); four levels of partial sums.
template <int K, int W, typename Load>
FIELDBRAIN_LEGACY_SUMS_SIMD inline void multi_row_sum(Load load, int64_t size, float (&out)[K][W]) {
  constexpr int kLevels = 4;
  const int64_t power = level_power(size);
  const int64_t step = int64_t{1} << power, mask = step - 1;
  float acc[kLevels][K][W] = {};
  int64_t i = 0;
  for (; i + step <= size;) {
    for (int64_t j = 0; j < step; ++j, ++i)
      for (int k = 0; k < K; ++k) {
        const float* v = load(i, k);
        for (int l = 0; l < W; ++l) acc[0][k][l] += v[l];
      }
    for (int j = 1; j < kLevels; ++j) {
      for (int k = 0; k < K; ++k)
        for (int l = 0; l < W; ++l) {
          acc[j][k][l] += acc[j - 1][k][l];
          acc[j - 1][k][l] = 0.0f;
        }
      if ((i & (mask << (j * power))) != 0) break;
    }
  }
  for (; i < size; ++i)
    for (int k = 0; k < K; ++k) {
      const float* v = load(i, k);
      for (int l = 0; l < W; ++l) acc[0][k][l] += v[l];
    }
  for (int j = 1; j < kLevels; ++j)
    for (int k = 0; k < K; ++k)
      for (int l = 0; l < W; ++l) acc[0][k][l] += acc[j][k][l];
  for (int k = 0; k < K; ++k)
    for (int l = 0; l < W; ++l) out[k][l] = acc[0][k][l];
}

// SumKernel's row_sum: `size` items of W lanes (item i at load(i)) as rows of 4 items (four
// interleaved accumulators), the items past the last whole row added to the first accumulator,
// then the four accumulators folded into it.
template <int W, typename Load>
FIELDBRAIN_LEGACY_SUMS_SIMD inline void row_sum(Load load, int64_t size, float (&out)[W]) {
  const int64_t size_ilp = size / 4;
  float partial[4][W];
  multi_row_sum<4, W>([&](int64_t i, int k) { return load(4 * i + k); }, size_ilp, partial);
  for (int64_t i = size_ilp * 4; i < size; ++i) {
    const float* v = load(i);
    for (int l = 0; l < W; ++l) partial[0][l] += v[l];
  }
  for (int k = 1; k < 4; ++k)
    for (int l = 0; l < W; ++l) partial[0][l] += partial[k][l];
  for (int l = 0; l < W; ++l) out[l] = partial[0][l];
}

// vectorized_inner_sum's value for one contiguous row of n >= W floats (before it is added to
// the zero-filled output): the vector row_sum, then the scalar tail, then the lanes in order.
template <int W>
FIELDBRAIN_LEGACY_SUMS_SIMD inline float inner_row_sum(const float* x, int64_t n) {
  const int64_t nvec = n / W;
  float lanes[W];
  row_sum<W>([&](int64_t v) { return x + v * W; }, nvec, lanes);
  float total = 0.0f;
  for (int64_t k = nvec * W; k < n; ++k) total += x[k];
  for (int l = 0; l < W; ++l) total += lanes[l];
  return total;
}

// The scalar row_sum of n values `stride` apart (rows shorter than a vector, columns).
FIELDBRAIN_LEGACY_SUMS_SIMD inline float scalar_row_sum(const float* x, int64_t stride, int64_t n) {
  float out[1];
  row_sum<1>([&](int64_t i) { return x + i * stride; }, n, out);
  return out[0];
}

template <int W>
FIELDBRAIN_LEGACY_SUMS_SIMD float sum_contiguous(const float* x, int64_t n) {
  return n >= W ? 0.0f + inner_row_sum<W>(x, n) : 0.0f + scalar_row_sum(x, 1, n);
}

// inner_row_sum of a row whose length N is known when compiling (the field's 48 content
// channels): the cascade's sizes fold to constants.
template <int W, int64_t N>
FIELDBRAIN_LEGACY_SUMS_SIMD inline float inner_row_sum_fixed(const float* x) {
  return inner_row_sum<W>(x, N);
}

template <int W>
FIELDBRAIN_LEGACY_SUMS_SIMD void row_sums(const float* x, int64_t rows, int64_t row_stride,
                                          int64_t n, float* out) {
  if (n == 48) {
    for (int64_t r = 0; r < rows; ++r)
      out[r] = 0.0f + inner_row_sum_fixed<W, 48>(x + r * row_stride);
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * row_stride;
    out[r] = n >= W ? 0.0f + inner_row_sum<W>(row, n) : 0.0f + scalar_row_sum(row, 1, n);
  }
}

template <int W>
FIELDBRAIN_LEGACY_SUMS_SIMD float strided_sum(const float* x, int64_t rows, int64_t row_stride,
                                              int64_t n) {
  // rows that meet end to end make one contiguous row for TensorIterator
  if (row_stride == n || rows == 1) return sum_contiguous<W>(x, rows * n);
  float total = 0.0f;
  if (n == 48) {
    for (int64_t r = 0; r < rows; ++r) total += inner_row_sum_fixed<W, 48>(x + r * row_stride);
    return total;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * row_stride;
    total += n >= W ? inner_row_sum<W>(row, n) : scalar_row_sum(row, 1, n);
  }
  return total;
}

// Column slices of `slice_cols` each summed as ATen sums the slice alone: where every slice is
// whole vectors of W lanes and narrower than four vectors, ATen sums each column with a
// lanewise vector row_sum over the rows, so all `cols` columns are one lanewise row_sum over
// the rows, taken in one walk.
template <int W>
FIELDBRAIN_LEGACY_SUMS_SIMD void slice_column_sums(const float* x, int64_t rows, int64_t row_stride,
                                                   int64_t slice_cols, int64_t slices, float* out);

// vectorized_outer_sum (cols >= W) or scalar_outer_sum (cols < W)
template <int W>
FIELDBRAIN_LEGACY_SUMS_SIMD void column_sums(const float* x, int64_t rows, int64_t row_stride,
                                             int64_t cols, float* out) {
  int64_t j = 0;
  if (cols >= W) {
    for (; j + 4 * W <= cols; j += 4 * W) {
      float sums[4][W];
      multi_row_sum<4, W>([&](int64_t i, int k) { return x + i * row_stride + j + k * W; }, rows,
                          sums);
      for (int k = 0; k < 4; ++k)
        for (int l = 0; l < W; ++l) out[j + k * W + l] = 0.0f + sums[k][l];
    }
    for (; j + W <= cols; j += W) {
      float sums[W];
      row_sum<W>([&](int64_t i) { return x + i * row_stride + j; }, rows, sums);
      for (int l = 0; l < W; ++l) out[j + l] = 0.0f + sums[l];
    }
  } else {
    for (; j + 3 < cols; j += 4) {
      float sums[4][1];
      multi_row_sum<4, 1>([&](int64_t i, int k) { return x + i * row_stride + j + k; }, rows, sums);
      for (int k = 0; k < 4; ++k) out[j + k] = 0.0f + sums[k][0];
    }
  }
  for (; j < cols; ++j) out[j] = 0.0f + scalar_row_sum(x + j, row_stride, rows);
}

template <int W>
FIELDBRAIN_LEGACY_SUMS_SIMD void slice_column_sums(const float* x, int64_t rows, int64_t row_stride,
                                                   int64_t slice_cols, int64_t slices, float* out) {
  if (slice_cols * slices == 64 && slice_cols % W == 0 && slice_cols < 4 * W) {
    float sums[64];
    row_sum<64>([&](int64_t i) { return x + i * row_stride; }, rows, sums);
    for (int l = 0; l < 64; ++l) out[l] = 0.0f + sums[l];
    return;
  }
  for (int64_t s = 0; s < slices; ++s)
    column_sums<W>(x + s * slice_cols, rows, row_stride, slice_cols, out + s * slice_cols);
}

int detect_lanes() {
  // 16 values whose float32 sum is 2^24 + 2 when summed as two 8-lane vectors (lanes first
  // paired: 1, 1, 2^24, then added in order) and 2^24 when summed as one 16-lane vector (in
  // order: 2^24 + 1 rounds back to 2^24 twice).
  torch::Tensor x = torch::zeros({16}, torch::kFloat32);
  float* p = x.data_ptr<float>();
  p[2] = 16777216.0f;
  p[8] = 1.0f;
  p[9] = 1.0f;
  const float s = x.sum().item<float>();
  return s == 16777216.0f ? 16 : 8;
}

}  // namespace

int aten_float_lanes() {
  static const int lanes = detect_lanes();
  return lanes;
}

float aten_sum(const float* x, int64_t n) {
  return aten_float_lanes() == 16 ? sum_contiguous<16>(x, n) : sum_contiguous<8>(x, n);
}

void aten_row_sums(const float* x, int64_t rows, int64_t row_stride, int64_t n, float* out) {
  if (aten_float_lanes() == 16)
    row_sums<16>(x, rows, row_stride, n, out);
  else
    row_sums<8>(x, rows, row_stride, n, out);
}

float aten_strided_sum(const float* x, int64_t rows, int64_t row_stride, int64_t n) {
  return aten_float_lanes() == 16 ? strided_sum<16>(x, rows, row_stride, n)
                                  : strided_sum<8>(x, rows, row_stride, n);
}

void aten_slice_column_sums(const float* x, int64_t rows, int64_t row_stride, int64_t slice_cols,
                            int64_t slices, float* out) {
  if (aten_float_lanes() == 16)
    slice_column_sums<16>(x, rows, row_stride, slice_cols, slices, out);
  else
    slice_column_sums<8>(x, rows, row_stride, slice_cols, slices, out);
}

void aten_column_sums(const float* x, int64_t rows, int64_t row_stride, int64_t cols, float* out) {
  if (aten_float_lanes() == 16)
    column_sums<16>(x, rows, row_stride, cols, out);
  else
    column_sums<8>(x, rows, row_stride, cols, out);
}

FIELDBRAIN_LEGACY_SUMS_SIMD float aten_scalar_row_sum(const float* x, int64_t stride, int64_t n) {
  return scalar_row_sum(x, stride, n);
}

namespace {

// 1 / n for n = 1..64, each correctly rounded (the division's own double)
struct InverseCounts {
  double v[64];
  constexpr InverseCounts() : v() {
    for (int i = 0; i < 64; ++i) v[i] = 1.0 / static_cast<double>(i + 1);
  }
  constexpr double operator[](int64_t i) const { return v[i]; }
};
constexpr InverseCounts kInverseCounts;

// delta / n, correctly rounded, without a division: q = delta * (1/n), then one correction
// q + (delta - q * n) * (1/n) with FMAs (the residual delta - q * n is exact). With 1/n
// correctly rounded and q within an ulp of the quotient, this is the correctly rounded
// quotient for every finite delta away from underflow (Markstein's theorem; Welford's deltas
// are differences of float-valued doubles, far above double's underflow); the divisions it
// replaces were ATen's per-value cost. test/legacy/exact_math_test.cpp holds it against the
// division.
FIELDBRAIN_LEGACY_SUMS_SIMD inline double divided_by_count(double delta, double n, double inv) {
  const double q = delta * inv;
  const double r = std::fma(-q, n, delta);
  // r == 0: q is the quotient (for delta = -0 the correction would make it +0)
  return r == 0.0 ? q : std::fma(r, inv, q);
}

// Welford over G rows side by side (values[i][g]: row g's i-th value), the quotient as
// divided_by_count takes it, lanewise in G / 4 vectors of 4 doubles. Each row's chain of
// dependent steps (~20 cycles a value) is the same whatever G; a wider group runs more chains
// at once, so their latencies overlap.
template <int G>
FIELDBRAIN_LEGACY_SUMS_SIMD inline void welford_group(const float (*values)[G], int64_t n,
                                                      double* mean_out, double* m2_out) {
#if defined(__x86_64__) && defined(__GNUC__)
  constexpr int H = G / 4;
  __m256d mean[H], m2[H];
  for (int h = 0; h < H; ++h) mean[h] = m2[h] = _mm256_setzero_pd();
  const __m256d zero = _mm256_setzero_pd();
  for (int64_t i = 0; i < n; ++i) {
    const __m256d nf = _mm256_set1_pd(static_cast<double>(i + 1));
    const __m256d inv = _mm256_set1_pd(kInverseCounts[i]);
    for (int h = 0; h < H; ++h) {
      const __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(values[i] + 4 * h));
      const __m256d delta = _mm256_sub_pd(v, mean[h]);
      const __m256d q = _mm256_mul_pd(delta, inv);
      const __m256d r = _mm256_fnmadd_pd(q, nf, delta);
      const __m256d corrected = _mm256_fmadd_pd(r, inv, q);
      const __m256d quotient =
          _mm256_blendv_pd(corrected, q, _mm256_cmp_pd(r, zero, _CMP_EQ_OQ));
      mean[h] = _mm256_add_pd(mean[h], quotient);
      m2[h] = _mm256_add_pd(m2[h], _mm256_mul_pd(delta, _mm256_sub_pd(v, mean[h])));
    }
  }
  for (int h = 0; h < H; ++h) {
    _mm256_storeu_pd(mean_out + 4 * h, mean[h]);
    _mm256_storeu_pd(m2_out + 4 * h, m2[h]);
  }
#else
  for (int g = 0; g < G; ++g) {
    double mean = 0.0, m2 = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const auto v = static_cast<double>(values[i][g]);
      const double delta = v - mean;
      mean = mean + divided_by_count(delta, static_cast<double>(i + 1), kInverseCounts[i]);
      m2 = m2 + delta * (v - mean);
    }
    mean_out[g] = mean;
    m2_out[g] = m2;
  }
#endif
}

constexpr int64_t kMaxWelfordN = 64;

// values[i][g] = x[g * row_stride + i] for G rows of n values (a transpose: moves only), by
// 8 x 8 tiles where n allows it.
template <int G>
FIELDBRAIN_LEGACY_SUMS_SIMD inline void side_by_side(const float* x, int64_t row_stride, int64_t n,
                                                     float (*values)[G]) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (n % 8 == 0) {
    for (int g0 = 0; g0 < G; g0 += 8)
      for (int64_t i0 = 0; i0 < n; i0 += 8) {
        __m256 t[8], u[8];
        for (int k = 0; k < 8; ++k) t[k] = _mm256_loadu_ps(x + (g0 + k) * row_stride + i0);
        for (int k = 0; k < 8; k += 2) {
          u[k] = _mm256_unpacklo_ps(t[k], t[k + 1]);
          u[k + 1] = _mm256_unpackhi_ps(t[k], t[k + 1]);
        }
        for (int k = 0; k < 8; k += 4) {
          t[k] = _mm256_shuffle_ps(u[k], u[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
          t[k + 1] = _mm256_shuffle_ps(u[k], u[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
          t[k + 2] = _mm256_shuffle_ps(u[k + 1], u[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
          t[k + 3] = _mm256_shuffle_ps(u[k + 1], u[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
        }
        // t[0..3]: columns 0, 1, 2, 3 (and 4-7 in the high halves) of rows 0-3; t[4..7] of
        // rows 4-7
        for (int k = 0; k < 4; ++k) {
          _mm256_storeu_ps(values[i0 + k] + g0, _mm256_permute2f128_ps(t[k], t[k + 4], 0x20));
          _mm256_storeu_ps(values[i0 + k + 4] + g0,
                           _mm256_permute2f128_ps(t[k], t[k + 4], 0x31));
        }
      }
    return;
  }
#endif
  for (int g = 0; g < G; ++g)
    for (int64_t i = 0; i < n; ++i) values[i][g] = x[g * row_stride + i];
}

// aten_row_vars of rows [r, rows) in groups of G rows while whole groups remain; returns the
// first row not done, and sets `stop` when a group met a non-finite value (that group is left
// to the caller's divisions, and so is every row after it).
template <int G>
FIELDBRAIN_LEGACY_SUMS_SIMD int64_t row_var_groups(const float* x, int64_t r, int64_t rows,
                                                   int64_t row_stride, int64_t n, float* out,
                                                   bool& stop) {
  for (; r + G <= rows; r += G) {
    float values[kMaxWelfordN][G];
    side_by_side<G>(x + r * row_stride, row_stride, n, values);
    double mean[G], m2[G];
    welford_group<G>(values, n, mean, m2);
    bool finite = true;
    for (int g = 0; g < G; ++g) finite &= std::isfinite(m2[g]);
    // an inf among the values: the quotient's correction step gives NaN where the division
    // gives inf, so such a group takes the divisions
    if (!finite) {
      stop = true;
      return r;
    }
    for (int g = 0; g < G; ++g)
      out[r + g] = static_cast<float>(m2[g] / static_cast<double>(n - 1));
  }
  return r;
}

}  // namespace

double welford_quotient(double delta, int64_t n) {
  return divided_by_count(delta, static_cast<double>(n), kInverseCounts[n - 1]);
}

FIELDBRAIN_LEGACY_SUMS_SIMD void aten_row_vars(const float* x, int64_t rows, int64_t row_stride,
                                               int64_t n, float* out) {
  // WelfordOps::reduce, value by value in double; 32, 16 or 8 rows at a time (their values
  // side by side) so the divisions run as vectors and the rows' chains overlap
  int64_t r = 0;
  if (n <= kMaxWelfordN) {
    bool stop = false;
    r = row_var_groups<32>(x, r, rows, row_stride, n, out, stop);
    if (!stop) r = row_var_groups<16>(x, r, rows, row_stride, n, out, stop);
    if (!stop) r = row_var_groups<8>(x, r, rows, row_stride, n, out, stop);
  }
  for (; r < rows; ++r) {
    double mean = 0.0, m2 = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      const auto v = static_cast<double>(x[r * row_stride + i]);
      const double delta = v - mean;
      mean = mean + delta / static_cast<double>(i + 1);
      m2 = m2 + delta * (v - mean);
    }
    out[r] = static_cast<float>(m2 / static_cast<double>(n - 1));
  }
}

FIELDBRAIN_LEGACY_SUMS_SIMD float aten_strided_var(const float* x, int64_t rows, int64_t row_stride,
                                                   int64_t n) {
  const int64_t count = rows * n;
  const auto mean =
      static_cast<double>(aten_strided_sum(x, rows, row_stride, n) / static_cast<float>(count));
  double sum = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * row_stride;
    for (int64_t i = 0; i < n; ++i) {
      const double d = static_cast<double>(row[i]) - mean;
      sum += d * d;
    }
  }
  return static_cast<float>(sum / static_cast<double>(std::max<int64_t>(0, count - 1)));
}

AtenRowSum::AtenRowSum(int64_t n) : n_(n), lanes_(aten_float_lanes()) {
  chunk_ = 4 * lanes_;
  // rows shorter than a vector are summed whole by the scalar path (result())
  chunks_ = n >= lanes_ ? (n / lanes_) / 4 : 0;
  level_power_ = level_power(chunks_);
}

void AtenRowSum::cascade() {
  const int64_t W = lanes_;
  const int64_t mask = (int64_t{1} << level_power_) - 1;
  for (int j = 1; j < 4; ++j) {
    for (int k = 0; k < 4; ++k)
      for (int64_t l = 0; l < W; ++l) {
        acc_[j][k][l] += acc_[j - 1][k][l];
        acc_[j - 1][k][l] = 0.0f;
      }
    if ((done_ & (mask << (j * level_power_))) != 0) break;
  }
}

template <int W>
FIELDBRAIN_LEGACY_SUMS_SIMD void AtenRowSum::add_chunks(const float* x, int64_t m) {
  // the level-0 accumulators in locals (x may alias nothing of them, but the compiler cannot
  // know), written back at each level-0 block's end
  const int64_t mask = (int64_t{1} << level_power_) - 1;
  float a[4][W];
  for (int k = 0; k < 4; ++k)
    for (int l = 0; l < W; ++l) a[k][l] = acc_[0][k][l];
  for (int64_t c = 0; c < m; ++c, x += 4 * W) {
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < W; ++l) a[k][l] += x[k * W + l];
    done_ += 1;
    if ((done_ & mask) == 0) {
      for (int k = 0; k < 4; ++k)
        for (int l = 0; l < W; ++l) acc_[0][k][l] = a[k][l];
      cascade();
      for (int k = 0; k < 4; ++k)
        for (int l = 0; l < W; ++l) a[k][l] = acc_[0][k][l];
    }
  }
  for (int k = 0; k < 4; ++k)
    for (int l = 0; l < W; ++l) acc_[0][k][l] = a[k][l];
}

void AtenRowSum::add_chunk(const float* chunk) {
  if (lanes_ == 16)
    add_chunks<16>(chunk, 1);
  else
    add_chunks<8>(chunk, 1);
}

void AtenRowSum::add(const float* x, int64_t count) {
  if (done_ * chunk_ + pending_n_ + count > n_)
    throw std::logic_error("AtenRowSum: more values than the row holds");
  while (count > 0) {
    if (done_ < chunks_) {
      if (pending_n_ == 0 && count >= chunk_) {
        const int64_t m = std::min(count / chunk_, chunks_ - done_);
        if (lanes_ == 16)
          add_chunks<16>(x, m);
        else
          add_chunks<8>(x, m);
        x += m * chunk_;
        count -= m * chunk_;
        continue;
      }
      const int64_t take = std::min(chunk_ - pending_n_, count);
      std::memcpy(pending_ + pending_n_, x, static_cast<size_t>(take) * sizeof(float));
      pending_n_ += take;
      x += take;
      count -= take;
      if (pending_n_ == chunk_) {
        add_chunk(pending_);
        pending_n_ = 0;
      }
    } else {
      std::memcpy(pending_ + pending_n_, x, static_cast<size_t>(count) * sizeof(float));
      pending_n_ += count;
      count = 0;
    }
  }
}

float AtenRowSum::result() const {
  if (done_ != chunks_ || done_ * chunk_ + pending_n_ != n_)
    throw std::logic_error("AtenRowSum: the row is not complete");
  if (n_ < lanes_) return aten_sum(pending_, n_);
  const int64_t W = lanes_;
  float acc[4][16];
  for (int k = 0; k < 4; ++k)
    for (int64_t l = 0; l < W; ++l)
      acc[k][l] = ((acc_[0][k][l] + acc_[1][k][l]) + acc_[2][k][l]) + acc_[3][k][l];
  // row_sum: the vectors past the last whole chunk, then the accumulators folded
  const int64_t nvec = n_ / W, left_vectors = nvec - chunks_ * 4;
  for (int64_t v = 0; v < left_vectors; ++v)
    for (int64_t l = 0; l < W; ++l) acc[0][l] += pending_[v * W + l];
  for (int k = 1; k < 4; ++k)
    for (int64_t l = 0; l < W; ++l) acc[0][l] += acc[k][l];
  // vectorized_inner_sum: the scalar tail, then the lanes
  float total = 0.0f;
  for (int64_t i = left_vectors * W; i < pending_n_; ++i) total += pending_[i];
  for (int64_t l = 0; l < W; ++l) total += acc[0][l];
  return 0.0f + total;
}

}  // namespace fieldbrain::legacy
