// The per-voxel and per-robot arithmetic of the fused imprint (brain/ops/sensory_imprint.h,
// docs/cycle.md step 4), written once for the CPU kernel (called in loops) and the CUDA kernels
// (called from their threads). Plain C++ over raw pointers, no LibTorch. Products that are
// summed go through philox::mul_rn / add_rn so that nvcc does not contract them into FMAs the
// CPU build does not make (the two kernels then round alike).
#pragma once

#include <cmath>
#include <cstdint>

#include "brain/ops/cycle_layout.h"
#include "brain/ops/philox.h"

namespace fieldbrain {
namespace ops {
namespace imprint {

// Thresholds of step 4 (compared in float32, as ATen compares a float tensor with a scalar).
constexpr float kCosineEps = 1e-8f;
constexpr float kExistingCos = 0.9f;
constexpr float kExistingCrowded = 2.0f;
constexpr float kResonantAccept = 0.3f;
constexpr float kActiveThreshold = 0.01f;
using fieldbrain::kMapCapacity;  // brain/ops/cycle_layout.h
constexpr int kBlobVoxels = 125;

// Step 4.1: s = (0.5 + 0.5 r) prev_imp prev_amp, then x boost (error field present) or
// x (0.1 + 0.9 (1 - conf)).
FIELDBRAIN_HOST_DEVICE float strength(float r, float prev_imp, float prev_amp, float has_ef,
                                      float boost, float conf) {
  using philox::add_rn;
  using philox::mul_rn;
  const float s = mul_rn(mul_rn(add_rn(mul_rn(r, 0.5f), 0.5f), prev_imp), prev_amp);
  return has_ef > 0.5f ? mul_rn(s, boost) : mul_rn(s, add_rn(mul_rn(1.0f - conf, 0.9f), 0.1f));
}

// Euclidean norm of n values, summed in index order.
FIELDBRAIN_HOST_DEVICE float norm(const float* v, int n) {
  float sq = 0.0f;
  for (int i = 0; i < n; ++i) sq = philox::add_rn(sq, philox::mul_rn(v[i], v[i]));
  return philox::sqrt_rn(sq);
}

// cosine_similarity(a, m, eps) the way ATen computes it: each side divided by max(norm, eps),
// then the products summed. `a_norm` is a's clamped norm.
FIELDBRAIN_HOST_DEVICE float cosine(const float* a, float a_norm, const float* m, int n) {
  float mn = norm(m, n);
  mn = mn > kCosineEps ? mn : kCosineEps;
  float dot = 0.0f;
  for (int i = 0; i < n; ++i)
    dot =
        philox::add_rn(dot, philox::mul_rn(philox::div_rn(a[i], a_norm), philox::div_rn(m[i], mn)));
  return dot;
}

// cosine_similarity of two scalars (a vector dimension of size 1): the signs' product, or
// smaller where a magnitude is below eps.
FIELDBRAIN_HOST_DEVICE float scalar_cosine(float a, float b) {
  const float na = fabsf(a) > kCosineEps ? fabsf(a) : kCosineEps;
  const float nb = fabsf(b) > kCosineEps ? fabsf(b) : kCosineEps;
  return philox::mul_rn(philox::div_rn(a, na), philox::div_rn(b, nb));
}

// Step 4.6 before the argmax: q = (1 - occ)(1 - sigmoid(5 act)) + 0.1 eps, zeroed (times 0)
// where act <= 0.01.
FIELDBRAIN_HOST_DEVICE float empty_score(float act, float occ, float eps) {
  using philox::add_rn;
  using philox::mul_rn;
  const float sig = 1.0f / (1.0f + expf(-mul_rn(act, 5.0f)));
  const float q = add_rn(mul_rn(1.0f - occ, 1.0f - sig), mul_rn(eps, 0.1f));
  return mul_rn(q, act > kActiveThreshold ? 1.0f : 0.0f);
}

// avg_pool3d(act, 3, stride 1, padding 1, count_include_pad = False) at voxel v of [R,R,R].
FIELDBRAIN_HOST_DEVICE float box_mean(const float* act, int R, int v) {
  const int x = v / (R * R), y = (v / R) % R, z = v % R;
  float sum = 0.0f;
  int count = 0;
  for (int i = x - 1; i <= x + 1; ++i) {
    if (i < 0 || i >= R) continue;
    for (int j = y - 1; j <= y + 1; ++j) {
      if (j < 0 || j >= R) continue;
      for (int k = z - 1; k <= z + 1; ++k) {
        if (k < 0 || k >= R) continue;
        sum = philox::add_rn(sum, act[(i * R + j) * R + k]);
        ++count;
      }
    }
  }
  return sum / static_cast<float>(count);
}

// avg_pool3d(res, 3, stride 1, padding 1, count_include_pad = True) at voxel v.
FIELDBRAIN_HOST_DEVICE float smoothed(const float* res, int R, int v) {
  const int x = v / (R * R), y = (v / R) % R, z = v % R;
  float sum = 0.0f;
  for (int i = x - 1; i <= x + 1; ++i) {
    if (i < 0 || i >= R) continue;
    for (int j = y - 1; j <= y + 1; ++j) {
      if (j < 0 || j >= R) continue;
      for (int k = z - 1; k <= z + 1; ++k) {
        if (k < 0 || k >= R) continue;
        sum = philox::add_rn(sum, res[(i * R + j) * R + k]);
      }
    }
  }
  return sum / 27.0f;
}

// The resonant projection at a voxel of its support: sum over the voxel's entries (in entry
// order) of weight x p[sensor].
FIELDBRAIN_HOST_DEVICE float projection(const float* p, const int32_t* entry_sensor,
                                        const float* entry_weight, int begin, int end) {
  float acc = 0.0f;
  for (int e = begin; e < end; ++e)
    acc = philox::add_rn(acc, philox::mul_rn(p[entry_sensor[e]], entry_weight[e]));
  return acc;
}

// "a beats b" for a first-maximum argmax: larger, or equal and earlier.
FIELDBRAIN_HOST_DEVICE bool beats(float a, int64_t ia, float b, int64_t ib) {
  return a > b || (a == b && ia < ib);
}

// The blob's offset i (0..124) as (dx, dy, dz) in -2..2 and its weight 0.8^(|dx|+|dy|+|dz|)
// (the weights are passed in, computed in double and rounded once at construction).
FIELDBRAIN_HOST_DEVICE void blob_offset(int i, int& dx, int& dy, int& dz) {
  dx = i / 25 - 2;
  dy = (i / 5) % 5 - 2;
  dz = i % 5 - 2;
}

}  // namespace imprint
}  // namespace ops
}  // namespace fieldbrain
