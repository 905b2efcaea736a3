#include "brain/legacy/exact_block_sums.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "brain/legacy/aten_sums.h"

namespace fieldbrain::legacy {

namespace {

struct Dim {
  int64_t size, stride;
};

// The block's three reduced dims as TensorIterator leaves them: ascending stride (a tie: the
// smaller size first), size-1 dims dropped, neighbours that meet end to end merged.
int reduced_dims(const FieldBlock& b, Dim (&out)[3]) {
  Dim d[3] = {{b.sizes[0], b.strides[0]}, {b.sizes[1], b.strides[1]}, {b.sizes[2], b.strides[2]}};
  std::stable_sort(d, d + 3, [](const Dim& a, const Dim& c) {
    return a.stride != c.stride ? a.stride < c.stride : a.size < c.size;
  });
  int n = 0;
  for (const Dim& dim : d) {
    if (dim.size == 1) continue;
    if (n > 0 && out[n - 1].size * out[n - 1].stride == dim.stride)
      out[n - 1].size *= dim.size;
    else
      out[n++] = dim;
  }
  return n;
}

// torch.sum(block, (0, 1, 2)) in ATen's order (the cascade sum adds each 2-D loop's row sums
// into the zero-filled output).
void block_channel_sums(const FieldBlock& b, float* out) {
  Dim d[3];
  const int n = reduced_dims(b, d);
  const int64_t C = b.channels;
  if (n <= 1) {
    // one reduced dim left: the channels are the 2-D loop's contiguous outer dim
    aten_column_sums(b.data, n == 0 ? 1 : d[0].size, n == 0 ? 0 : d[0].stride, C, out);
    return;
  }
  // two or three: scalar_inner_sum over (d0, d1), d2 and the channels outside it
  const int64_t outer = n == 3 ? d[2].size : 1, outer_stride = n == 3 ? d[2].stride : 0;
  for (int64_t c = 0; c < C; ++c) {
    float acc = 0.0f;
    for (int64_t k = 0; k < outer; ++k)
      for (int64_t j = 0; j < d[1].size; ++j)
        acc += aten_scalar_row_sum(b.data + c + k * outer_stride + j * d[1].stride, d[0].stride,
                                   d[0].size);
    out[c] = acc;
  }
}

// torch.sum(block) over every dim: the channels (stride 1) and the spatial dims, ascending
// stride, merged where they meet end to end; the 2-D loop's rows (the first dim) each summed as
// vectorized_inner_sum / scalar_inner_sum sum them (= a torch.sum of the row) and added in order.
float block_sum_all(const FieldBlock& b) {
  Dim d[4];
  int n = 0;
  d[n++] = {b.channels, 1};
  Dim spatial[3];
  const int m = reduced_dims(b, spatial);
  for (int k = 0; k < m; ++k) {
    if (d[n - 1].size * d[n - 1].stride == spatial[k].stride)
      d[n - 1].size *= spatial[k].size;
    else
      d[n++] = spatial[k];
  }
  const int64_t n1 = n > 1 ? d[1].size : 1, n2 = n > 2 ? d[2].size : 1, n3 = n > 3 ? d[3].size : 1;
  const int64_t s1 = n > 1 ? d[1].stride : 0, s2 = n > 2 ? d[2].stride : 0,
                s3 = n > 3 ? d[3].stride : 0;
  float acc = 0.0f;
  for (int64_t i3 = 0; i3 < n3; ++i3)
    for (int64_t i2 = 0; i2 < n2; ++i2)
      for (int64_t i1 = 0; i1 < n1; ++i1)
        acc += aten_sum(b.data + i3 * s3 + i2 * s2 + i1 * s1, d[0].size);
  return acc;
}

float own_block_mean(const FieldBlock& b) {
  return block_sum_all(b) / static_cast<float>(b.sizes[0] * b.sizes[1] * b.sizes[2] * b.channels);
}

float aten_block_mean(const FieldBlock& b) {
  const torch::Tensor view = torch::from_blob(
      const_cast<float*>(b.data), {b.sizes[0], b.sizes[1], b.sizes[2], b.channels},
      {b.strides[0], b.strides[1], b.strides[2], 1}, torch::kFloat32);
  return torch::mean(view).item<float>();
}

void own_channel_means(const FieldBlock& b, float* out) {
  block_channel_sums(b, out);
  const auto count = static_cast<float>(b.sizes[0] * b.sizes[1] * b.sizes[2]);
  for (int64_t c = 0; c < b.channels; ++c) out[c] = out[c] / count;
}

void aten_channel_means(const FieldBlock& b, float* out) {
  const torch::Tensor view = torch::from_blob(
      const_cast<float*>(b.data), {b.sizes[0], b.sizes[1], b.sizes[2], b.channels},
      {b.strides[0], b.strides[1], b.strides[2], 1}, torch::kFloat32);
  const torch::Tensor means = torch::mean(view, {0, 1, 2}).contiguous();
  std::copy_n(means.data_ptr<float>(), b.channels, out);
}

torch::Tensor probe_field(at::IntArrayRef sizes, float scale) {
  torch::Tensor f = torch::empty(sizes, torch::kFloat32);
  float* p = f.data_ptr<float>();
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int64_t i = 0; i < f.numel(); ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const auto u = static_cast<float>(static_cast<double>(state >> 40) / 16777216.0);  // [0, 1)
    p[i] = (u - 0.4f) * scale;
  }
  return f;
}

// Blocks of a pseudo-random [7, 7, 7, 24] field (and a [4, 4, 4, 64] one, whose full rows merge) at
// every corner and size the cycle takes, and channel windows of 16, 20 and 64 wide: all equal.
bool probe_block_means() {
  // filled from a fixed integer sequence: no generator is touched
  const torch::Tensor f7 = probe_field({7, 7, 7, 24}, 3.0f);
  const torch::Tensor f4 = probe_field({4, 4, 4, 64}, 0.7f);
  float own[65], aten[65];
  for (const torch::Tensor& f : {f7, f4}) {
    const int64_t R = f.size(0), C = f.size(3);
    for (int64_t x0 = 0; x0 < R; x0 += 2)
      for (int64_t len = 1; len <= R - x0; len += 2)
        for (int64_t w : {int64_t{16}, C}) {
          FieldBlock b;
          b.data = f.data_ptr<float>() + x0 * f.stride(1) + (C - w);
          b.sizes = {len, R - x0, std::min<int64_t>(len + 1, R)};
          b.strides = {f.stride(0), f.stride(1), f.stride(2)};
          b.channels = w;
          own_channel_means(b, own);
          aten_channel_means(b, aten);
          own[w] = own_block_mean(b);
          aten[w] = aten_block_mean(b);
          for (int64_t c = 0; c <= w; ++c)
            if (std::memcmp(&own[c], &aten[c], sizeof(float)) != 0) return false;
        }
  }
  return true;
}

}  // namespace

FieldBlock field_block(const at::Tensor& view) {
  TORCH_CHECK(view.dim() == 4 && view.stride(3) == 1 && view.scalar_type() == at::kFloat,
              "a float [x, y, z, C] view with contiguous C");
  FieldBlock b;
  b.data = view.data_ptr<float>();
  b.sizes = {view.size(0), view.size(1), view.size(2)};
  b.strides = {view.stride(0), view.stride(1), view.stride(2)};
  b.channels = view.size(3);
  return b;
}

bool all_finite(const float* x, int64_t n) {
  int bad = 0;  // |x| <= max is false for inf and NaN; an OR over ints vectorises
  for (int64_t i = 0; i < n; ++i) bad |= !(std::fabs(x[i]) <= std::numeric_limits<float>::max());
  return bad == 0;
}

bool exact_block_means_available() {
  static const bool available = probe_block_means();
  return available;
}

void exact_block_channel_means(const FieldBlock& block, float* out) {
  // (one channel: the kept dim would be dropped, another order; the cycle's blocks have 16)
  if (exact_block_means_available() && block.channels > 1)
    own_channel_means(block, out);
  else
    aten_channel_means(block, out);
}

float exact_block_mean(const FieldBlock& block) {
  if (exact_block_means_available() && block.channels > 1) return own_block_mean(block);
  return aten_block_mean(block);
}

void exact_column_means(const float* x, int64_t rows, int64_t cols, float* out) {
  // one column: TensorIterator drops the kept dim of size 1, and the rows are one contiguous sum
  if (cols == 1)
    out[0] = aten_sum(x, rows);
  else
    aten_column_sums(x, rows, cols, cols, out);
  for (int64_t c = 0; c < cols; ++c) out[c] = out[c] / static_cast<float>(rows);
}

float exact_abs_mean(const float* x, int64_t n) {
  thread_local std::vector<float> abs_values;
  if (static_cast<int64_t>(abs_values.size()) < n) abs_values.resize(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) abs_values[i] = std::fabs(x[i]);
  return aten_sum(abs_values.data(), n) / static_cast<float>(n);
}

float exact_block_abs_mean(const FieldBlock& b) {
  const int64_t n = b.sizes[0] * b.sizes[1] * b.sizes[2] * b.channels;
  thread_local std::vector<float> abs_values;
  if (static_cast<int64_t>(abs_values.size()) < n) abs_values.resize(static_cast<std::size_t>(n));
  float* out = abs_values.data();
  for (int64_t x = 0; x < b.sizes[0]; ++x)
    for (int64_t y = 0; y < b.sizes[1]; ++y)
      for (int64_t z = 0; z < b.sizes[2]; ++z) {
        const float* v = b.data + x * b.strides[0] + y * b.strides[1] + z * b.strides[2];
        for (int64_t c = 0; c < b.channels; ++c) *out++ = std::fabs(v[c]);
      }
  return aten_sum(abs_values.data(), n) / static_cast<float>(n);
}

float exact_block_abs_max(const FieldBlock& b) {
  float m = 0.0f;
  for (int64_t x = 0; x < b.sizes[0]; ++x)
    for (int64_t y = 0; y < b.sizes[1]; ++y)
      for (int64_t z = 0; z < b.sizes[2]; ++z) {
        const float* v = b.data + x * b.strides[0] + y * b.strides[1] + z * b.strides[2];
        for (int64_t c = 0; c < b.channels; ++c) {
          const float a = std::fabs(v[c]);
          if (std::isnan(a)) return a;
          m = a > m ? a : m;
        }
      }
  return m;
}

int64_t exact_abs_argmax(const float* v, int64_t n, int64_t stride) {
  int64_t best = 0;
  float best_abs = std::fabs(v[0]);
  for (int64_t i = 1; i < n && !std::isnan(best_abs); ++i) {
    const float a = std::fabs(v[i * stride]);
    if (std::isnan(a) || a > best_abs) best = i, best_abs = a;
  }
  return best;
}

}  // namespace fieldbrain::legacy
