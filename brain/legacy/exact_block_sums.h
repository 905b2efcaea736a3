// The legacy cycle's small reductions over blocks of the field and short vectors, taken as direct
// loops over the tensors' memory with the float32 results ATen gives (aten_sums.h's orders), so
// the cycle asks for no tensor and makes no ATen call for them. Each is held against the ATen
// expression it stands for by test/legacy/exact_block_sums_test.cpp.
#pragma once

#include <array>
#include <cstdint>

namespace at {
class Tensor;
}

namespace fieldbrain::legacy {

// A [nx, ny, nz, channels] view of a float tensor whose channels are contiguous: the first
// value's address, the three sizes and the three strides (in floats).
struct FieldBlock {
  const float* data = nullptr;
  std::array<int64_t, 3> sizes{};
  std::array<int64_t, 3> strides{};
  int64_t channels = 0;
};

// The FieldBlock of a float [x, y, z, C] view whose C is contiguous (a c10::Error otherwise).
FieldBlock field_block(const at::Tensor& view);

// torch.mean(block, (0, 1, 2)) into out[channels]: TensorIterator's order for that reduction
// (the reduced dims innermost by stride, coalesced where they meet end to end; two or more left:
// each innermost row summed as SumKernel's scalar row_sum and added to the output in order; one
// left: the vectorised column sums), then the sums divided by the count as floats. Probed once
// against torch::mean; where it differs (another release's kernel) torch::mean is called.
void exact_block_channel_means(const FieldBlock& block, float* out);

// torch.mean(x, 0) of a contiguous [rows, cols] float block (rows >= 1) into out[cols]: the
// columns summed down the rows in ATen's order (aten_column_sums), divided by rows as floats.
void exact_column_means(const float* x, int64_t rows, int64_t cols, float* out);

// float(torch.mean(block)) over every dim (channels >= 2): the dims innermost by stride and
// coalesced as TensorIterator takes them, each contiguous innermost row summed as a torch.sum of
// it and added to the output in order, divided by the count as a float. Probed with
// exact_block_channel_means; where that probe fails torch::mean is called.
float exact_block_mean(const FieldBlock& block);

// float(torch.std(block)) (Bessel's correction) of a block of >= 2 values: ATen's two-pass full
// reduction on the CPU (std_var_all_cpu): the block's float mean (exact_block_mean) as a double,
// then (x - mean)^2 summed in doubles in TensorIterator's order, one running sum per 2-D loop
// chunk added to the total, divided by n - 1, its root rounded to a float. Probed once against
// torch::std; where it differs (another release's kernel), or the block is big enough for ATen to
// split it among threads, torch::std is called.
float exact_block_std(const FieldBlock& block);

// float(torch.mean(torch.abs(torch.diff(block, 1, dim)))) for a spatial dim (0, 1 or 2) of size
// >= 2: the differences next[i] - this[i] (a float subtraction, the same in any order) in C order,
// as .contiguous() lays them out, summed as one row. A dim of size 1 gives 0 (the original takes
// zeros then).
float exact_block_diff_abs_mean(const FieldBlock& block, int dim);

// float(torch.cosine_similarity(a[None], b[None], 1)) of two vectors of n >= 1 contiguous floats,
// as LibTorch 1.13 takes it: sum(a * a) and sum(b * b) each as a torch.sum of the row, clamped
// below at float(1e-8 * 1e-8), their float roots; then sum((a / |a|) * (b / |b|)) as a row sum.
// The same float as each row of the batched call torch.cosine_similarity(a[None], B, 1). Probed
// once against torch::cosine_similarity, single and batched; where it differs (LibTorch 2.x's
// linalg_vector_norm) torch::cosine_similarity is called.
float exact_cosine_similarity(const float* a, const float* b, int64_t n);

// Whether exact_cosine_similarity takes its own loops in this process (for the tests, and for a
// batched caller, which keeps its batched ATen call where it does not).
bool exact_cosine_available();

// block[..., channel] / (torch.norm(block[..., channel]) + 1e-8) into out[nx * ny * nz] (C order,
// as the division lays it out), for a block of >= 2 channels (the channel's values are not
// contiguous): the norm as ATen's scalar NormTwoOps reduction takes it, one float sum of squares
// in the view's order (with or without a fused multiply-add, as the running LibTorch's kernel
// was compiled: probed once), its float root plus float(1e-8), each value divided by that.
// Where the probe finds neither equal to ATen, ATen's expression is computed.
void exact_normalised_channel(const FieldBlock& block, int64_t channel, float* out);

// Whether exact_normalised_channel takes its own loops in this process; exposed for the tests.
bool exact_normalised_channel_available();

// Whether exact_block_std takes its own loops in this process; exposed for the tests.
bool exact_block_std_available();

// float(torch.mean(torch.abs(block))): torch.abs makes a contiguous copy, summed as one row.
float exact_block_abs_mean(const FieldBlock& block);

// float(torch.mean(torch.abs(x))) of n >= 1 contiguous floats.
float exact_abs_mean(const float* x, int64_t n);

// float(torch.max(torch.abs(block))): a max is the same float in any order; a NaN wins.
float exact_block_abs_max(const FieldBlock& block);

// torch.argmax(torch.abs(v)) of n >= 1 floats `stride` apart: the first index of the largest
// |value|, a NaN counting as the largest (the first NaN), as ATen's argmax breaks ties.
int64_t exact_abs_argmax(const float* v, int64_t n, int64_t stride);

// bool(torch.isfinite(x).all()) of n contiguous floats, in one pass without temporaries (the
// legacy engine's check of a field after each cycle).
bool all_finite(const float* x, int64_t n);

// Whether exact_block_channel_means takes its own loops in this process (the start-up probe
// found them equal to torch::mean); exposed for the tests.
bool exact_block_means_available();

}  // namespace fieldbrain::legacy
