#include "brain/legacy/exact_tanh.h"

#include <torch/torch.h>

#include <cstring>
#include <limits>
#include <vector>

#include "brain/legacy/exact_tanh_avx512.h"
#include "brain/legacy/exact_tanh_simd.h"

namespace fieldbrain::legacy {

namespace exact_tanh_probe {

#if defined(__x86_64__) && defined(__GNUC__)
// eight lanes at a time (AVX2 + FMA)
__attribute__((target("avx2,fma"))) void tanh_n_narrow(float* x, int64_t n) {
  using exact_tanh_detail::tanh8;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, tanh8(_mm256_loadu_ps(x + i)));
  if (i < n) {  // the tail as one vector more (the function is lanewise)
    alignas(32) float rest[8] = {};
    std::memcpy(rest, x + i, sizeof(float) * static_cast<size_t>(n - i));
    _mm256_store_ps(rest, tanh8(_mm256_load_ps(rest)));
    std::memcpy(x + i, rest, sizeof(float) * static_cast<size_t>(n - i));
  }
}

// sixteen lanes at a time, two vectors in flight (AVX-512F; exact_tanh_avx512.h: tanh8's
// floats), the last fewer than 16 values by tanh_n_narrow
__attribute__((target("avx512f"))) void tanh_n_wide(float* x, int64_t n) {
  using exact_tanh_wide_detail::tanh16;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = tanh16(_mm512_loadu_ps(x + i)), b = tanh16(_mm512_loadu_ps(x + i + 16));
    _mm512_storeu_ps(x + i, a);
    _mm512_storeu_ps(x + i + 16, b);
  }
  if (i + 16 <= n) {
    _mm512_storeu_ps(x + i, tanh16(_mm512_loadu_ps(x + i)));
    i += 16;
  }
  if (i < n) tanh_n_narrow(x + i, n - i);
}

bool wide_supported() {
  static const bool supported = __builtin_cpu_supports("avx512f");
  return supported;
}

void tanh_n(float* x, int64_t n) {
  if (wide_supported())
    tanh_n_wide(x, n);
  else
    tanh_n_narrow(x, n);
}

bool probe() {
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) return false;
  // every 4099th bit pattern (both signs, every exponent: zeros, subnormals, the range where
  // the result is 1, infinities, NaNs), the edges, and the two inputs whose result changes
  // with the order of one double-float addition
  std::vector<float> in;
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) {
    const auto bits = static_cast<uint32_t>(b);
    float v;
    std::memcpy(&v, &bits, sizeof v);
    in.push_back(v);
  }
  for (float v : {0.0f, -0.0f, 8.664339742f, -8.664339742f, 0x1.8bd194p+2f, -0x1.8bd194p+2f,
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::quiet_NaN()})
    in.push_back(v);
  torch::Tensor x =
      torch::from_blob(in.data(), {static_cast<int64_t>(in.size())}, torch::kFloat32).clone();
  const torch::Tensor expected = at::tanh(x);
  const auto bytes = sizeof(float) * static_cast<size_t>(x.numel());
  // both walks: the wide one takes its last values with the narrow one
  torch::Tensor narrow = x.clone();
  tanh_n_narrow(narrow.data_ptr<float>(), narrow.numel());
  if (std::memcmp(narrow.data_ptr<float>(), expected.data_ptr<float>(), bytes) != 0) return false;
  if (!wide_supported()) return true;
  tanh_n_wide(x.data_ptr<float>(), x.numel());
  return std::memcmp(x.data_ptr<float>(), expected.data_ptr<float>(), bytes) == 0;
}
#else
void tanh_n(float*, int64_t) {}
bool wide_supported() { return false; }
bool probe() { return false; }
#endif

}  // namespace exact_tanh_probe

bool exact_tanh_available() {
  static const bool available = exact_tanh_probe::probe();
  return available;
}

bool exact_tanh_is_wide() { return exact_tanh_probe::wide_supported(); }

void exact_tanh_inplace(float* x, int64_t n) { exact_tanh_probe::tanh_n(x, n); }

void exact_tanh_rows_inplace(float* x, int64_t rows, int64_t row_stride, int64_t channels) {
  for (int64_t r = 0; r < rows; ++r) exact_tanh_probe::tanh_n(x + r * row_stride, channels);
}

}  // namespace fieldbrain::legacy
