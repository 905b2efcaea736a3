// CPU kernels of fieldbrain::attractor_record_ / attractor_pull_ (brain/ops/attractor_pull.h):
// at::parallel_for over channels. The pull's per-channel sums go to the caller's workspace and
// are added in channel order; the list of pulling slots is per-thread scratch grown on first
// use, so the steady state allocates nothing.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <cstring>
#include <vector>

#include "brain/ops/attractor_math.h"
#include "brain/ops/attractor_pull.h"

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace {

void attractor_record_cpu(at::Tensor& bank, const at::Tensor& field, const at::Tensor& slot) {
  const auto shape = check_attractor_record_args(bank, field, slot, c10::DeviceType::CPU);
  const int64_t B = shape.batch, A = shape.slots, V = shape.resolution * shape.resolution * shape.resolution;
  const auto slots = slot.accessor<int64_t, 1>();
  for (int64_t b = 0; b < B; ++b) {
    TORCH_CHECK(slots[b] < A, "fieldbrain::attractor_record_: slot ", slots[b], " of robot ", b,
                " is beyond the bank's ", A, " slots");
  }
  const float* F = field.data_ptr<float>();
  float* bank_p = bank.data_ptr<float>();
  at::parallel_for(0, B * 64, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / 64, c = t % 64, j = slots[b];
      if (j < 0) continue;
      std::memcpy(bank_p + ((b * A + j) * 64 + c) * V, F + (b * 64 + c) * V, sizeof(float) * V);
    }
  });
}

// sum over [0, n) of x[i] * y[i]: float runs of 256, added in double.
double dot(const float* x, const float* y, int64_t n) {
  double total = 0.0;
  for (int64_t i = 0; i < n; i += 256) {
    float s = 0.f;
    for (int64_t k = i; k < std::min(n, i + 256); ++k) s += x[k] * y[k];
    total += s;
  }
  return total;
}

void attractor_pull_cpu(at::Tensor& field, const at::Tensor& bank, const at::Tensor& weights,
                        at::Tensor& workspace) {
  const auto shape = check_attractor_pull_args(field, bank, weights, workspace, c10::DeviceType::CPU);
  const int64_t B = shape.batch, A = shape.slots, V = shape.resolution * shape.resolution * shape.resolution;
  const int width = attractor_sums_width(static_cast<int>(A));
  float* F = field.data_ptr<float>();
  const float* bank_p = bank.data_ptr<float>();
  const float* w = weights.data_ptr<float>();
  double* sums_p = workspace.data_ptr<double>();
  thread_local std::vector<int64_t> live;  // the slots that pull, of the robot at hand
  thread_local std::vector<float> coef;
  for (int64_t b = 0; b < B; ++b) {
    live.clear();
    for (int64_t j = 0; j < A; ++j) {
      if (w[(b * A + j) * kAttractorWeightColumns + kAttractorWeight] != 0.f) live.push_back(j);
    }
    if (live.empty()) continue;
    const int64_t L = static_cast<int64_t>(live.size());
    float* Fb = F + b * 64 * V;
    const float* Pb = bank_p + b * A * 64 * V;
    double* sums = sums_p + b * 64 * width;
    // The worker threads see other thread_local instances: hand them this thread's arrays.
    const int64_t* slots = live.data();
    // Pass 1: per channel, |F|^2, F.P_j and |P_j|^2.
    at::parallel_for(0, 64, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        double* part = sums + c * width;
        const float* f = Fb + c * V;
        part[0] = dot(f, f, V);
        for (int64_t l = 0; l < L; ++l) {
          const float* p = Pb + (slots[l] * 64 + c) * V;
          part[1 + 2 * slots[l]] = dot(f, p, V);
          part[2 + 2 * slots[l]] = dot(p, p, V);
        }
      }
    });
    // The robot's totals, in channel order, and each slot's coefficient.
    coef.resize(L);
    double ff = 0.0;
    for (int64_t c = 0; c < 64; ++c) ff += sums[c * width];
    for (int64_t l = 0; l < L; ++l) {
      double fp = 0.0, pp = 0.0;
      for (int64_t c = 0; c < 64; ++c) {
        fp += sums[c * width + 1 + 2 * live[l]];
        pp += sums[c * width + 2 + 2 * live[l]];
      }
      const float* wj = w + (b * A + live[l]) * kAttractorWeightColumns;
      coef[l] = static_cast<float>(
          attractor_coefficient(wj[kAttractorWeight], wj[kAttractorValence], ff, fp, pp));
    }
    const float* coefs = coef.data();
    // Pass 2: F += sum_j coef_j (P_j - F), every coefficient from the field before the pull.
    at::parallel_for(0, 64, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        float* f = Fb + c * V;
        for (int64_t i = 0; i < V; ++i) {
          float total = 0.f;
          for (int64_t l = 0; l < L; ++l) total += (Pb[(slots[l] * 64 + c) * V + i] - f[i]) * coefs[l];
          f[i] += total;
        }
      }
    });
  }
}

}  // namespace
}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CPU, m) {
  m.impl("attractor_record_", TORCH_FN(fieldbrain::ops::cpu::attractor_record_cpu));
  m.impl("attractor_pull_", TORCH_FN(fieldbrain::ops::cpu::attractor_pull_cpu));
}
