// Clean-up capacity: how many role-filler pairs one trace of dimension D holds when the
// fillers are recovered by nearest-neighbour clean-up among M candidates (docs/hrr.md
// "Numbers to expect"). Procedure per trial: a codebook of M unit Gaussian fillers; trace = sum of k
// bind(role_i, filler_i) with distinct fillers from the codebook and fresh roles; every role
// is queried; success = the codebook's top-1 dot product is the true filler.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace fieldbrain::hrr {

struct CapacityOptions {
  int64_t dim = 512;
  int64_t candidates = 1000;  // M
  std::vector<int64_t> pair_counts = {4, 8, 12, 16, 20, 24, 32, 40, 48, 64, 96};
  int64_t trials = 100;  // traces per k; queries per k = trials * k
  std::uint64_t seed = 1;
  bool unitary_roles = false;
  torch::Dtype dtype = torch::kFloat32;
  torch::Device device = torch::kCPU;
};

struct CapacityPoint {
  int64_t pairs = 0;  // k
  int64_t queries = 0;
  int64_t correct = 0;
  double accuracy() const { return queries ? static_cast<double>(correct) / queries : 0.0; }
  // Binomial standard error of accuracy().
  double standard_error() const;
};

// Measures accuracy for each k in options.pair_counts (k > M is skipped). `progress`, if set,
// is called after each k with (points done, points total).
std::vector<CapacityPoint> measure_capacity(
    const CapacityOptions& options,
    const std::function<void(std::size_t, std::size_t)>& progress = {});

// Largest k on the measured grid such that it and every smaller k reach `target`; 0 if none.
int64_t capacity_at(const std::vector<CapacityPoint>& curve, double target);

// The fitted rules of thumb of §3.5 (+-10 %): k99 ~ D / (3.5 ln M + 9), k90 ~ D / (2.7 ln M + 3).
double predicted_capacity_99(int64_t dim, int64_t candidates);
double predicted_capacity_90(int64_t dim, int64_t candidates);

}  // namespace fieldbrain::hrr
