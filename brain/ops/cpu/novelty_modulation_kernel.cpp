// CPU kernel of fieldbrain::novelty_modulation_: argument checks, then at::parallel_for over
// robots, each robot by the functions of brain/ops/novelty_modulation_math.h (the same ones the
// CUDA kernel runs). A robot's result never depends on the other robots (alone = in a batch).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

#include "brain/ops/cpu/kernels.h"

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace {

// Dot product of two 512-float rows with 8 independent partial sums (the compiler keeps them in
// vector registers without reassociating anything).
float dot512(const float* x, const float* y) {
  float acc[8] = {};
  for (int k = 0; k < modulation::kNovDim; k += 8) {
    for (int l = 0; l < 8; ++l) acc[l] += x[k + l] * y[k + l];
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

void modulate_robot(const modulation::ModulationArrays& a, int64_t b) {
  const int64_t R = a.resolution;
  const float* F = a.field + b * 64 * R * R * R;
  const int64_t* f = a.facts + b * kFactColumns;
  const int64_t n = f[kFactCycle], count = f[kFactNovCount];

  // The normalised sample of the corner block.
  float v[modulation::kNovDim];
  for (int i = 0; i < modulation::kNovDim; ++i) v[i] = F[modulation::corner_offset(i, R)];
  const float norm = std::sqrt(dot512(v, v)) + 1e-8f;
  for (int i = 0; i < modulation::kNovDim; ++i) v[i] = v[i] / norm;

  // The best age-weighted similarity to the memory (below 0 counts as 0).
  float* nov = a.nov + b * modulation::kNovCapacity * modulation::kNovDim;
  int64_t* ts = a.nov_ts + b * modulation::kNovCapacity;
  float best = -1.0f;
  for (int j = 0; j < modulation::kNovCapacity; ++j) {
    const float w = modulation::memory_weight(n, ts[j], j, count);
    if (w < 0.0f) continue;
    const float sim = dot512(nov + j * modulation::kNovDim, v) * w;
    if (sim > best || std::isnan(sim)) best = sim;
  }

  // Push the sample with its timestamp, then everything else.
  const int64_t slot = count % modulation::kNovCapacity;
  std::copy(v, v + modulation::kNovDim, nov + slot * modulation::kNovDim);
  ts[slot] = n;
  modulation::finish_robot(a, b, best);
}

}  // namespace

void run(const modulation::ModulationArrays& a) {
  at::parallel_for(0, a.batch, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) modulate_robot(a, b);
  });
}

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
