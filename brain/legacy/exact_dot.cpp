#include "brain/legacy/exact_dot.h"

#include <ATen/CPUGeneratorImpl.h>
#include <dlfcn.h>
#include <torch/torch.h>

#include <cstring>
#include <random>
#include <vector>

namespace fieldbrain::legacy {

namespace exact_dot_probe {

// BLAS's single-precision dot (Fortran calling convention, REAL result)
using Sdot = float (*)(const int*, const float*, const int*, const float*, const int*);

Sdot find_sdot() { return reinterpret_cast<Sdot>(dlsym(RTLD_DEFAULT, "sdot_")); }

Sdot sdot() {
  static const Sdot f = find_sdot();
  return f;
}

bool probe() {
  if (sdot() == nullptr) return false;
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(20261128);
  for (int64_t n : {1, 2, 3, 5, 7, 8, 15, 16, 31, 33, 100, 255, 511, 512, 513, 600}) {
    for (double scale : {1e-3, 1.0, 1e3}) {
      const torch::Tensor a = at::randn({n}, gen, torch::kFloat32) * scale;
      const torch::Tensor b = at::randn({n}, gen, torch::kFloat32) + 0.25;
      const float expected = torch::dot(a, b).item<float>();
      const float ours = exact_dot(a.data_ptr<float>(), b.data_ptr<float>(), n);
      if (std::memcmp(&expected, &ours, sizeof ours) != 0) return false;
    }
  }
  return true;
}

// the reference BLAS's sdot: one running float sum, each product rounded then added, in index
// order (the legacy library is built with -ffp-contract=off: no fused multiply-add)
float in_order(const float* a, const float* b, int64_t n) {
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s = s + a[i] * b[i];
  return s;
}

// in_order for eight vectors at once: eight independent chains, element by element
void eight_in_order(const float* a, const float* const* b, int64_t n, float* out) {
  float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f, s4 = 0.0f, s5 = 0.0f, s6 = 0.0f, s7 = 0.0f;
  const float *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3], *b4 = b[4], *b5 = b[5], *b6 = b[6],
              *b7 = b[7];
  for (int64_t i = 0; i < n; ++i) {
    const float x = a[i];
    s0 = s0 + x * b0[i];
    s1 = s1 + x * b1[i];
    s2 = s2 + x * b2[i];
    s3 = s3 + x * b3[i];
    s4 = s4 + x * b4[i];
    s5 = s5 + x * b5[i];
    s6 = s6 + x * b6[i];
    s7 = s7 + x * b7[i];
  }
  out[0] = s0, out[1] = s1, out[2] = s2, out[3] = s3;
  out[4] = s4, out[5] = s5, out[6] = s6, out[7] = s7;
}

// whether sdot_ gives in_order's float on many lengths and scales (sdot_ is torch::dot's own
// call where exact_dot_available(): probe() above holds the two together); no tensors made
bool probe_in_order() {
  if (sdot() == nullptr) return false;
  std::mt19937 rng(20261129);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> a, b;
  const int one = 1;
  for (int64_t n = 1; n <= 1100; n += (n < 40 ? 1 : 37)) {
    for (float scale : {1e-3f, 1.0f, 1e3f}) {
      a.resize(static_cast<size_t>(n));
      b.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        a[static_cast<size_t>(i)] = normal(rng) * scale;
        b[static_cast<size_t>(i)] = normal(rng) + 0.25f;
      }
      const int count = static_cast<int>(n);
      const float blas = sdot()(&count, a.data(), &one, b.data(), &one);
      const float ours = in_order(a.data(), b.data(), n);
      if (std::memcmp(&blas, &ours, sizeof ours) != 0) return false;
    }
  }
  return true;
}

bool sums_in_order() {
  static const bool in_order_here = probe_in_order();
  return in_order_here;
}

}  // namespace exact_dot_probe

bool exact_dot_available() {
  // (the order probed here too: the first cycle that asks pays both probes)
  static const bool available =
      exact_dot_probe::probe() && (exact_dot_probe::sums_in_order(), true);
  return available;
}

float exact_dot(const float* a, const float* b, int64_t n) {
  const int count = static_cast<int>(n), one = 1;
  return exact_dot_probe::sdot()(&count, a, &one, b, &one);
}

void exact_dots(const float* a, const float* const* bs, int64_t count, int64_t n, float* out) {
  int64_t k = 0;
  if (exact_dot_probe::sums_in_order())
    for (; k + 8 <= count; k += 8) exact_dot_probe::eight_in_order(a, bs + k, n, out + k);
  for (; k < count; ++k) out[k] = exact_dot(a, bs[k], n);
}

}  // namespace fieldbrain::legacy
