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
// The block's four dims as a TensorIterator over it alone leaves them: the channels (stride 1),
// then the spatial dims by ascending stride, merged where they meet end to end; the dims merged
// away are left as {1, 0}, so callers loop over all four.
void all_dims(const FieldBlock& b, Dim (&d)[4]) {
  for (Dim& dim : d) dim = {1, 0};
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
}

float block_sum_all(const FieldBlock& b) {
  Dim d[4];
  all_dims(b, d);
  const int64_t n1 = d[1].size, n2 = d[2].size, n3 = d[3].size;
  const int64_t s1 = d[1].stride, s2 = d[2].stride, s3 = d[3].stride;
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

// std_var_all_cpu: the float mean as a double; each serial_for_each call (a [d0, d1] chunk) sums
// its (x - mean)^2 from 0.0 in order, and the chunk's sum is added to the total.
float own_block_std(const FieldBlock& b) {
  const double mean = static_cast<double>(own_block_mean(b));
  Dim d[4];
  all_dims(b, d);
  const int64_t n1 = d[1].size, n2 = d[2].size, n3 = d[3].size;
  const int64_t s1 = d[1].stride, s2 = d[2].stride, s3 = d[3].stride;
  double total = 0.0;
  for (int64_t i3 = 0; i3 < n3; ++i3)
    for (int64_t i2 = 0; i2 < n2; ++i2) {
      double chunk = 0.0;
      for (int64_t i1 = 0; i1 < n1; ++i1) {
        const float* row = b.data + i3 * s3 + i2 * s2 + i1 * s1;
        for (int64_t j = 0; j < d[0].size; ++j) {
          const double dx = static_cast<double>(row[j]) - mean;
          chunk += dx * dx;
        }
      }
      total += chunk;
    }
  const int64_t count = b.sizes[0] * b.sizes[1] * b.sizes[2] * b.channels;
  const double var = total / static_cast<double>(std::max<int64_t>(0, count - 1));
  return static_cast<float>(std::sqrt(var));
}

float aten_block_std(const FieldBlock& b) {
  const torch::Tensor view = torch::from_blob(
      const_cast<float*>(b.data), {b.sizes[0], b.sizes[1], b.sizes[2], b.channels},
      {b.strides[0], b.strides[1], b.strides[2], 1}, torch::kFloat32);
  return torch::std(view).item<float>();
}

// ATen splits a full reduction among threads from this many values (at::internal::GRAIN_SIZE).
constexpr int64_t kAtenGrainSize = 32768;

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

// Whether eq(block) holds for every probe block of the [R, R, R, C] field f: x from 0 in steps
// of 2, odd lengths, the last 16 channels and all C (the cycle's windows), y from x0, z one longer.
template <typename Eq>
bool every_probe_block(const torch::Tensor& f, Eq eq) {
  const int64_t R = f.size(0), C = f.size(3);
  for (int64_t x0 = 0; x0 < R; x0 += 2)
    for (int64_t len = 1; len <= R - x0; len += 2)
      for (int64_t w : {int64_t{16}, C}) {
        FieldBlock b;
        b.data = f.data_ptr<float>() + x0 * f.stride(1) + (C - w);
        b.sizes = {len, R - x0, std::min<int64_t>(len + 1, R)};
        b.strides = {f.stride(0), f.stride(1), f.stride(2)};
        b.channels = w;
        if (!eq(b)) return false;
      }
  return true;
}

// Blocks of a pseudo-random [7, 7, 7, 24] field (and a [4, 4, 4, 64] one, whose full rows merge) at
// every corner and size the cycle takes, and channel windows of 16, 20 and 64 wide: all equal.
bool probe_block_means() {
  // filled from a fixed integer sequence: no generator is touched
  const torch::Tensor f7 = probe_field({7, 7, 7, 24}, 3.0f);
  const torch::Tensor f4 = probe_field({4, 4, 4, 64}, 0.7f);
  float own[65], aten[65];
  for (const torch::Tensor& f : {f7, f4}) {
    const bool equal = every_probe_block(f, [&](const FieldBlock& b) {
      own_channel_means(b, own);
      aten_channel_means(b, aten);
      own[b.channels] = own_block_mean(b);
      aten[b.channels] = aten_block_mean(b);
      return std::memcmp(own, aten, sizeof(float) * (b.channels + 1)) == 0;
    });
    if (!equal) return false;
  }
  return true;
}

// The std stand-in over the same blocks as probe_block_means, and a few of constant or huge
// values (a zero variance; squares past float's range): all equal.
bool probe_block_std() {
  if (!exact_block_means_available()) return false;
  const torch::Tensor f7 = probe_field({7, 7, 7, 24}, 3.0f);
  const torch::Tensor f4 = probe_field({4, 4, 4, 64}, 0.7f);
  const torch::Tensor flat = torch::full({3, 3, 3, 16}, 0.1f);
  const torch::Tensor huge = probe_field({3, 3, 3, 16}, 3e30f);
  for (const torch::Tensor& f : {f7, f4, flat, huge}) {
    const bool equal = every_probe_block(f, [](const FieldBlock& b) {
      const float own = own_block_std(b), aten = aten_block_std(b);
      return std::memcmp(&own, &aten, sizeof(float)) == 0;
    });
    if (!equal) return false;
  }
  return true;
}

// cosine_similarity in LibTorch 1.13: pow(x, 2).sum(1) clamped to eps^2, sqrt, x / |x|, the
// products' row sum (pow(x, 2) is x * x; every division and product a float rounding).
float own_cosine(const float* a, const float* b, int64_t n) {
  thread_local std::vector<float> buf;
  if (static_cast<int64_t>(buf.size()) < n) buf.resize(static_cast<std::size_t>(n));
  float* t = buf.data();
  const auto eps2 = static_cast<float>(1e-8 * 1e-8);
  for (int64_t i = 0; i < n; ++i) t[i] = a[i] * a[i];
  const float sa = aten_sum(t, n);
  for (int64_t i = 0; i < n; ++i) t[i] = b[i] * b[i];
  const float sb = aten_sum(t, n);
  const float na = std::sqrt(sa < eps2 ? eps2 : sa), nb = std::sqrt(sb < eps2 ? eps2 : sb);
  for (int64_t i = 0; i < n; ++i) t[i] = (a[i] / na) * (b[i] / nb);
  return aten_sum(t, n);
}

float aten_cosine(const float* a, const float* b, int64_t n) {
  const torch::Tensor ta = torch::from_blob(const_cast<float*>(a), {1, n}, torch::kFloat32);
  const torch::Tensor tb = torch::from_blob(const_cast<float*>(b), {1, n}, torch::kFloat32);
  return torch::cosine_similarity(ta, tb, 1).item<float>();
}

// Every length up to 140 (the patterns' 125 values, the sensory mapping's rows), single and as a
// batch of 7 rows against one, at several scales, with a zero row (the clamp): all equal.
bool probe_cosine() {
  for (int64_t n = 1; n <= 140; ++n)
    for (float scale : {1.0f, 1e-3f, 40.0f}) {
      const torch::Tensor rows = probe_field({8, n, 1, 1}, scale).reshape({8, n});
      rows[5].zero_();
      const torch::Tensor batched =
          torch::cosine_similarity(rows[0].unsqueeze(0), rows.narrow(0, 1, 7), 1).contiguous();
      const float* r = rows.data_ptr<float>();
      for (int64_t k = 1; k < 8; ++k) {
        const float own = own_cosine(r, r + k * n, n);
        const float single = aten_cosine(r, r + k * n, n);
        const float batch = batched.data_ptr<float>()[k - 1];
        if (std::memcmp(&own, &single, sizeof(float)) != 0 ||
            std::memcmp(&own, &batch, sizeof(float)) != 0)
          return false;
      }
    }
  return true;
}

// The channel's sum of squares in C order, each step acc + x * x rounded twice (fused = false)
// or once (fused = true, an FMA as a compiler contracts it).
float channel_norm(const FieldBlock& b, int64_t channel, bool fused) {
  float acc = 0.0f;
  for (int64_t x = 0; x < b.sizes[0]; ++x)
    for (int64_t y = 0; y < b.sizes[1]; ++y)
      for (int64_t z = 0; z < b.sizes[2]; ++z) {
        const float v = b.data[x * b.strides[0] + y * b.strides[1] + z * b.strides[2] + channel];
        acc = fused ? std::fma(v, v, acc) : acc + v * v;
      }
  return std::sqrt(acc);
}

void own_normalised_channel(const FieldBlock& b, int64_t channel, bool fused, float* out) {
  const float denom = channel_norm(b, channel, fused) + static_cast<float>(1e-8);
  for (int64_t x = 0; x < b.sizes[0]; ++x)
    for (int64_t y = 0; y < b.sizes[1]; ++y)
      for (int64_t z = 0; z < b.sizes[2]; ++z)
        *out++ = b.data[x * b.strides[0] + y * b.strides[1] + z * b.strides[2] + channel] / denom;
}

void aten_normalised_channel(const FieldBlock& b, int64_t channel, float* out) {
  const torch::Tensor view = torch::from_blob(
      const_cast<float*>(b.data) + channel, {b.sizes[0], b.sizes[1], b.sizes[2]},
      {b.strides[0], b.strides[1], b.strides[2]}, torch::kFloat32);
  const torch::Tensor p = (view / (torch::norm(view) + 1e-8)).contiguous();
  std::copy_n(p.data_ptr<float>(), p.numel(), out);
}

// 0: ATen's expression; 1: the plain sum of squares; 2: the fused one. The first of 1 and 2 that
// gives ATen's floats over every block and channel of the probe fields.
int probe_normalised_channel() {
  const torch::Tensor f7 = probe_field({7, 7, 7, 24}, 3.0f);
  const torch::Tensor f4 = probe_field({4, 4, 4, 64}, 0.7f);
  const torch::Tensor tiny = probe_field({5, 5, 5, 16}, 1e-21f);
  for (const bool fused : {false, true}) {
    bool equal = true;
    for (const torch::Tensor& f : {f7, f4, tiny}) {
      const int64_t R = f.size(0), C = f.size(3);
      for (int64_t x0 = 0; x0 < R && equal; ++x0)
        for (int64_t len = 1; len <= std::min<int64_t>(5, R - x0) && equal; ++len) {
          FieldBlock b;
          b.data = f.data_ptr<float>() + x0 * f.stride(0) + x0 * f.stride(1);
          b.sizes = {len, std::min<int64_t>(5, R - x0), std::min<int64_t>({len + 1, R, 5})};
          b.strides = {f.stride(0), f.stride(1), f.stride(2)};
          b.channels = C;
          float own[125], aten[125];  // at most 5 x 5 x 5
          const int64_t n = b.sizes[0] * b.sizes[1] * b.sizes[2];
          for (int64_t c = 0; c < C && equal; c += 3) {
            own_normalised_channel(b, c, fused, own);
            aten_normalised_channel(b, c, aten);
            equal = std::memcmp(own, aten, sizeof(float) * static_cast<std::size_t>(n)) == 0;
          }
        }
    }
    if (equal) return fused ? 2 : 1;
  }
  return 0;
}

int normalised_channel_mode() {
  static const int mode = probe_normalised_channel();
  return mode;
}

}  // namespace

bool exact_normalised_channel_available() { return normalised_channel_mode() != 0; }

void exact_normalised_channel(const FieldBlock& block, int64_t channel, float* out) {
  const int mode = block.channels > 1 ? normalised_channel_mode() : 0;
  if (mode == 0)
    aten_normalised_channel(block, channel, out);
  else
    own_normalised_channel(block, channel, mode == 2, out);
}

bool exact_cosine_available() {
  static const bool available = probe_cosine();
  return available;
}

float exact_cosine_similarity(const float* a, const float* b, int64_t n) {
  return exact_cosine_available() ? own_cosine(a, b, n) : aten_cosine(a, b, n);
}

bool exact_block_std_available() {
  static const bool available = probe_block_std();
  return available;
}

float exact_block_std(const FieldBlock& block) {
  const int64_t count = block.sizes[0] * block.sizes[1] * block.sizes[2] * block.channels;
  if (exact_block_std_available() && block.channels > 1 && count < kAtenGrainSize)
    return own_block_std(block);
  return aten_block_std(block);
}

float exact_block_diff_abs_mean(const FieldBlock& b, int dim) {
  TORCH_CHECK(dim >= 0 && dim < 3, "exact_block_diff_abs_mean: a spatial dim");
  if (b.sizes[dim] < 2) return 0.0f;
  std::array<int64_t, 3> n = b.sizes;
  n[dim] -= 1;
  const int64_t step = b.strides[dim], count = n[0] * n[1] * n[2] * b.channels;
  thread_local std::vector<float> abs_diffs;
  if (static_cast<int64_t>(abs_diffs.size()) < count)
    abs_diffs.resize(static_cast<std::size_t>(count));
  float* out = abs_diffs.data();
  for (int64_t x = 0; x < n[0]; ++x)
    for (int64_t y = 0; y < n[1]; ++y)
      for (int64_t z = 0; z < n[2]; ++z) {
        const float* v = b.data + x * b.strides[0] + y * b.strides[1] + z * b.strides[2];
        for (int64_t c = 0; c < b.channels; ++c) *out++ = std::fabs(v[c + step] - v[c]);
      }
  return aten_sum(abs_diffs.data(), count) / static_cast<float>(count);
}

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
