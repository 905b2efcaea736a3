#include "brain/legacy/exact_dot.h"

#include <ATen/CPUGeneratorImpl.h>
#include <dlfcn.h>
#include <torch/torch.h>

#include <cstring>

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

}  // namespace exact_dot_probe

bool exact_dot_available() {
  static const bool available = exact_dot_probe::probe();
  return available;
}

float exact_dot(const float* a, const float* b, int64_t n) {
  const int count = static_cast<int>(n), one = 1;
  return exact_dot_probe::sdot()(&count, a, &one, b, &one);
}

}  // namespace fieldbrain::legacy
