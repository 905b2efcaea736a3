// ATen's float32 summation orders (LibTorch 1.13, one intra-op thread), reproduced for the fused
// loops over the legacy field. The original's trajectory is chaotic: a mean or a cosine summed in
// another order (even in double) is a different float32, and over a few hundred cycles such
// one-ulp differences grew past the 1e-5 bar. These functions give the float ATen gives, bit for
// bit, so a fused loop can replace a torch.sum / torch.mean / torch.var without moving the result.
//
// The orders are those of SumKernel.cpp's cascade_sum (accumulating in float32: chunks of 4
// vectors summed into levels of partial sums, the level width growing with the row length) and of
// ReduceOps' Welford variance (in double); test/legacy/aten_sums_test.cpp holds each against the
// ATen call it stands for.
#pragma once

#include <cstdint>

namespace fieldbrain::legacy {

// The float lanes of ATen's vectorised sum in this process: 8 (AVX2, and ATen's default build)
// or 16 (AVX512, chosen with ATEN_CPU_CAPABILITY=avx512). Found once, by asking at::sum for a
// 16-value sum whose float32 result tells the two apart.
int aten_float_lanes();

// torch.sum(x) of n contiguous floats.
float aten_sum(const float* x, int64_t n);

// The same sum over one contiguous row given in pieces, in order (any piece sizes): lets a walk
// over the field feed several long sums block by block.
class AtenRowSum {
 public:
  explicit AtenRowSum(int64_t n);
  // The next `count` values of the row.
  void add(const float* x, int64_t count);
  // torch.sum of the whole row; every one of its n values must have been added.
  float result() const;

 private:
  void add_chunk(const float* chunk);  // one chunk of 4 vectors
  template <int W>
  void add_chunks(const float* x, int64_t m);  // m whole chunks
  void cascade();  // after a level-0 block: carry the levels up as multi_row_sum does
  int64_t n_ = 0, lanes_ = 8, chunk_ = 32, chunks_ = 0, done_ = 0, pending_n_ = 0;
  int64_t level_power_ = 4;
  float acc_[4][4][16] = {};  // [level][ILP accumulator][lane]
  float pending_[64] = {};    // the values of a chunk not yet complete (and the row's tail)
};

// torch.sum(x, dim=-1) of `rows` rows of n contiguous floats, row r at x + r * row_stride.
void aten_row_sums(const float* x, int64_t rows, int64_t row_stride, int64_t n, float* out);

// torch.sum of a [rows, n] view whose rows are `row_stride` apart (e.g. field[..., :48], all
// dims reduced): each row summed as aten_row_sums, the row sums added in order.
float aten_strided_sum(const float* x, int64_t rows, int64_t row_stride, int64_t n);

// torch.sum over the rows of a [rows, cols] view (rows `row_stride` apart, cols contiguous), one
// sum per column: torch.sum(field[..., a:b], (0, 1, 2)) into out[cols].
void aten_column_sums(const float* x, int64_t rows, int64_t row_stride, int64_t cols, float* out);

// aten_column_sums of each of `slices` column slices of `slice_cols` columns (torch.sum of
// field[..., s * slice_cols:(s + 1) * slice_cols] over dims 0-2, slice by slice), in one walk over
// the rows where ATen's order allows it: out[slices * slice_cols].
void aten_slice_column_sums(const float* x, int64_t rows, int64_t row_stride, int64_t slice_cols,
                            int64_t slices, float* out);

// SumKernel's scalar row_sum of n values `stride` floats apart (the sum TensorIterator takes of
// each innermost row when that row is not contiguous), before it is added to the output.
float aten_scalar_row_sum(const float* x, int64_t stride, int64_t n);

// torch.var(x, dim=-1, unbiased=True) of `rows` rows of n contiguous floats (n > 1), row r at
// x + r * row_stride: Welford in double, rounded to float32.
void aten_row_vars(const float* x, int64_t rows, int64_t row_stride, int64_t n, float* out);

// delta / n (1 <= n <= 64) as aten_row_vars computes it without a division: equal to the
// division for every finite delta (exposed for the test that proves it).
double welford_quotient(double delta, int64_t n);

// torch.var(x) (all dims, unbiased) of a [rows, n] view, rows `row_stride` apart: ATen's
// whole-tensor path: the float32 mean (torch.mean of the view), then the squared deviations
// summed in double in memory order.
float aten_strided_var(const float* x, int64_t rows, int64_t row_stride, int64_t n);

}  // namespace fieldbrain::legacy
