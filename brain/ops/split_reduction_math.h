// The index and reduction arithmetic of the CUDA kernels that spread a robot's work over many
// blocks (brain/ops/cuda/split_reduction_kernel.cu, the imprint's maps in
// cuda/sensory_imprint_kernel.cu, the field step's noise and diffusion in
// cuda/field_step_kernel.cu; docs/gpu.md "Kernel sets"), once: the kernels call these functions
// from their threads, and test/ops/split_reduction_test.cpp runs the same functions in the same
// order on the CPU (the *_two_stage functions below) against the CPU kernels.
//
// One block per robot reducing a whole R^3 array (the first CUDA kernels, measured and replaced:
// docs/gpu.md "Kernel sets") left all but B of the GPU's SMs idle. Here a robot's reduction
// spreads over many blocks:
//   - the field step's statistics of Ef (max|Ef|, mean|Ef|): kEfSlices blocks per robot each
//     reduce a fixed slice of the robot's voxels into a partial (max, sum), then a finishing
//     kernel adds a robot's partials in slice order;
//   - the error field (step 3): one thread per voxel of every robot writes Ef, and mean|Ef|
//     comes from the R^2 (x, y) columns, since Ef depends on z only through |z - R/2| (<= 1, 2,
//     or beyond): one column's sum is three exact products, no pass over R^3 values;
//   - the imprint's maps (step 4): one thread per voxel of every robot, then a small pass per
//     x-plane for the empty score's maximum (below);
//   - and, not reductions, the field step's noise (one Philox block per thread) and its
//     periodic wrap (below).
// A robot's slices and its order of additions do not depend on the batch, so a robot alone and
// inside a batch get the same bits, and a CUDA-graph replay equals an eager launch (no atomics).
// Plain C++17 over raw pointers, no LibTorch, no CUDA headers.
#pragma once

#include <cstdint>

#include "brain/ops/hierarchy_learn_math.h"
#include "brain/ops/philox.h"  // FIELDBRAIN_HOST_DEVICE
#include "brain/ops/sensory_imprint_math.h"

namespace fieldbrain {
namespace ops {
namespace split {

constexpr int kThreads = 256;   // threads of every block of the split kernels (a power of two)
constexpr int kEfSlices = 64;   // blocks per robot for the statistics of Ef
constexpr int kEfPartialFloats = 2 * kEfSlices;  // per robot: [slice] max, then [slice] sum

// ---- Statistics of Ef: max|Ef| and mean|Ef| -------------------------------------------------

// Slice s of a robot's V voxels is [slice_begin(V, s), slice_begin(V, s + 1)).
FIELDBRAIN_HOST_DEVICE int64_t slice_begin(int64_t V, int s) { return V * s / kEfSlices; }

struct AbsStats {
  float max;   // the largest |value| (a NaN is skipped, as fmaxf does)
  double sum;  // sum of |value|
};
FIELDBRAIN_HOST_DEVICE AbsStats abs_stats_merge(AbsStats a, AbsStats b) {
  return {b.max > a.max ? b.max : a.max, a.sum + b.sum};
}
// Thread t's share of the slice [begin, end): elements begin + t, begin + t + kThreads, ...
FIELDBRAIN_HOST_DEVICE AbsStats abs_stats_thread(const float* e, int64_t begin, int64_t end, int t) {
  AbsStats s{0.0f, 0.0};
  for (int64_t i = begin + t; i < end; i += kThreads) {
    const float a = e[i] < 0.0f ? -e[i] : e[i];
    s.max = a > s.max ? a : s.max;
    s.sum += static_cast<double>(a);
  }
  return s;
}
// The block's tree over its threads' shares: after the steps kThreads/2, ..., 1 of
// p[t] = merge(p[t], p[t + step]) for t < step, p[0] holds the slice's statistics.
// The kernel runs each step in shared memory between barriers; the CPU runs the same loops.
FIELDBRAIN_HOST_DEVICE void tree_step(AbsStats* p, int t, int step) { p[t] = abs_stats_merge(p[t], p[t + step]); }
// The slice's partial as the workspace keeps it (two floats).
FIELDBRAIN_HOST_DEVICE void store_partial(const AbsStats& s, float* partials, int slice) {
  partials[slice] = s.max;
  partials[kEfSlices + slice] = static_cast<float>(s.sum);
}
// The finishing step: a robot's partials in slice order; max|Ef| and the error-field weight
// min(0.5, mean|Ef|), as the CPU kernel computes them (brain/ops/cpu/field_step_passes.cpp).
FIELDBRAIN_HOST_DEVICE void finish_ef_stats(const float* partials, int64_t V, float* max, float* weight) {
  float m = 0.0f;
  double sum = 0.0;
  for (int s = 0; s < kEfSlices; ++s) {
    m = partials[s] > m ? partials[s] : m;
    sum += static_cast<double>(partials[kEfSlices + s]);
  }
  const float mean = static_cast<float>(sum / static_cast<double>(V));
  *max = m;
  *weight = mean < 0.5f ? mean : 0.5f;
}

// ---- The error field (step 3) -----------------------------------------------------------------

// The 16 sites' x and y coordinates at resolution R (hierarchy::site_coord, which computes them
// in double: once per block instead of four times per site and voxel).
FIELDBRAIN_HOST_DEVICE void site_coords(int R, int* sx, int* sy) {
  for (int i = 0; i < hierarchy::kSites; ++i) {
    sx[i] = hierarchy::site_coord(i, 0, R);
    sy[i] = hierarchy::site_coord(i, 1, R);
  }
}
// Ef at (x, y, z) from the sites' coordinates: the float operations of
// hierarchy::error_field_value in the same order, so the same bits.
FIELDBRAIN_HOST_DEVICE float error_field_value_at(const float* up, const float* down, float base,
                                                  const int* sx, const int* sy, int R, int x,
                                                  int y, int z) {
  float v = 0.0f;
  const int dz = hierarchy::distance(z, R / 2);
  if (dz <= 2) {
    for (int i = 0; i < hierarchy::kSites; ++i) {
      const int ax = hierarchy::distance(x, sx[i]), ay = hierarchy::distance(y, sy[i]);
      const int d = ax > ay ? ax : ay;
      const int reach = d > dz ? d : dz;
      if (reach <= 1) v = v + up[i];
      if (reach <= 2) v = v - down[i];
    }
  }
  return v + base;
}
// How many z of a column fall in each class of |z - R/2|: <= 1 (the value at z = R/2), == 2 (the
// value at `edge_z`), beyond (the constant base).
struct ColumnClasses {
  int edge_z;
  int64_t near, edge, far;
};
FIELDBRAIN_HOST_DEVICE ColumnClasses column_classes(int R) {
  const int mid = R / 2;
  ColumnClasses c{mid + 2 < R ? mid + 2 : mid - 2, 0, 0, 0};
  for (int z = 0; z < R; ++z) {
    const int dz = hierarchy::distance(z, mid);
    if (dz <= 1) ++c.near;
    else if (dz == 2) ++c.edge;
    else ++c.far;
  }
  return c;
}
// Sum of |Ef| over the column (x, y): each class's |value| times its count, in double (each
// product of a float and a count below 2^24 is exact).
FIELDBRAIN_HOST_DEVICE double column_abs_sum(const float* up, const float* down, float base,
                                             const int* sx, const int* sy, int R,
                                             const ColumnClasses& c, int x, int y) {
  const float near = error_field_value_at(up, down, base, sx, sy, R, x, y, R / 2);
  const float edge = error_field_value_at(up, down, base, sx, sy, R, x, y, c.edge_z);
  auto mag = [](float v) { return static_cast<double>(v < 0.0f ? -v : v); };
  return (mag(near) * static_cast<double>(c.near) + mag(edge) * static_cast<double>(c.edge)) +
         mag(base) * static_cast<double>(c.far);
}
// Thread t's share of the robot's R^2 columns: p = t, t + kThreads, ... (x = p / R, y = p % R).
FIELDBRAIN_HOST_DEVICE double columns_thread(const float* up, const float* down, float base,
                                             const int* sx, const int* sy, int R,
                                             const ColumnClasses& c, int t) {
  double s = 0.0;
  for (int p = t; p < R * R; p += kThreads) s += column_abs_sum(up, down, base, sx, sy, R, c, p / R, p % R);
  return s;
}

// ---- The imprint's maps (step 4) ---------------------------------------------------------------
// First act and fp with one thread per voxel of every robot (the 64-channel pass, spread over
// the whole GPU), then each plane's first maximum of the empty score from act (one value per
// voxel instead of 64). The same bits as the CPU kernel: the same float operations on the same
// values, and a first-maximum argmax does not depend on the order it looks in.

// act = mean_c |F_c| and fp = mean(F_0..7) at voxel v of one robot's field F [64, V], summed in
// channel order as the CPU kernel does (brain/ops/cpu/sensory_imprint_kernel.cpp).
FIELDBRAIN_HOST_DEVICE void voxel_act_fp(const float* F, int64_t V, int64_t v, float* act, float* fp) {
  float a = F[v] < 0.0f ? -F[v] : F[v], f = F[v];
  for (int c = 1; c < 64; ++c) {
    const float x = F[c * V + v];
    a = a + (x < 0.0f ? -x : x);
    if (c < 8) f = f + x;
  }
  *act = a / 64.0f;
  *fp = f / 8.0f;
}
// The empty score of voxel v from the maps (its noise: element v of the robot's Philox stream
// kStreamEmptyLocation).
FIELDBRAIN_HOST_DEVICE float voxel_empty_score(const float* act, const float* occ, uint64_t seed,
                                               uint64_t cycle, int v) {
  return imprint::empty_score(act[v], occ[v],
                              philox::normal(seed, cycle, philox::kStreamEmptyLocation, static_cast<uint64_t>(v)));
}
// Plane x's first maximum of the empty score (value and voxel), as one thread looking in
// voxel order finds it; the kernel's threads and tree give the same by `beats`.
inline void plane_empty_first_max(const float* act, const float* occ, uint64_t seed, uint64_t cycle,
                                  int R, int x, float* best, int* best_v) {
  const int P = R * R;
  *best_v = x * P;
  *best = voxel_empty_score(act, occ, seed, cycle, x * P);
  for (int v = x * P + 1; v < (x + 1) * P; ++v) {
    const float q = voxel_empty_score(act, occ, seed, cycle, v);
    if (imprint::beats(q, v, *best, *best_v)) {
      *best = q;
      *best_v = v;
    }
  }
}

// ---- The field step's spontaneous noise (step 7.2) --------------------------------------------
// philox::normal(e) computes a whole Philox block of four normals and returns one. The field
// step's x2 kernel runs one thread per Philox block instead of one per element: thread k of a
// robot makes the block once and uses its four values for the robot's elements 4k .. 4k+3 of
// [48, V] (element e = c·V + v is stream index e), so each element gets philox::normal(e) for a
// quarter of the work. The thread's elements, as (channel, voxel) with one division:
struct NoiseBlock {
  int count;     // elements of the block inside [0, 48 V): 4, or fewer in the last block
  int c0;        // channel of the first element
  int64_t v0;    // voxel of the first element; the next ones follow, wrapping to channel c0 + 1
};
FIELDBRAIN_HOST_DEVICE NoiseBlock noise_block(int64_t k, int64_t V) {
  const int64_t e0 = 4 * k, n = 48 * V;
  NoiseBlock blk{0, 0, 0};
  if (e0 >= n) return blk;
  blk.count = n - e0 < 4 ? static_cast<int>(n - e0) : 4;
  blk.c0 = static_cast<int>(e0 / V);
  blk.v0 = e0 - static_cast<int64_t>(blk.c0) * V;
  return blk;
}
// Element j (< count) of the block as (channel, voxel).
FIELDBRAIN_HOST_DEVICE void noise_block_element(const NoiseBlock& blk, int64_t V, int j, int* c, int64_t* v) {
  int64_t vv = blk.v0 + j;
  int cc = blk.c0;
  while (vv >= V) {  // at most once unless V < 4
    vv -= V;
    ++cc;
  }
  *c = cc;
  *v = vv;
}

// ---- The field step's periodic diffusion (step 7.8) -------------------------------------------
// A neighbour's coordinate a in [-1, R] wrapped into [0, R) by comparison: what (a + R) % R
// gives, without an integer division by the run-time R (nine per element).
FIELDBRAIN_HOST_DEVICE int periodic_wrap(int a, int R) { return a < 0 ? a + R : (a >= R ? a - R : a); }

// ---- The same two stages on the CPU (tests) ------------------------------------------------

// max|Ef| and the error-field weight of one robot's e[V], in the kernels' order.
inline void ef_stats_two_stage(const float* e, int64_t V, float* max, float* weight) {
  float partials[kEfPartialFloats];
  AbsStats p[kThreads];
  for (int s = 0; s < kEfSlices; ++s) {
    for (int t = 0; t < kThreads; ++t) p[t] = abs_stats_thread(e, slice_begin(V, s), slice_begin(V, s + 1), t);
    for (int step = kThreads / 2; step > 0; step /= 2)
      for (int t = 0; t < step; ++t) tree_step(p, t, step);
    store_partial(p[0], partials, s);
  }
  finish_ef_stats(partials, V, max, weight);
}

// mean|Ef| of one robot from its terms (hierarchy::error_field_terms), in the kernel's order.
inline double error_field_abs_mean_two_stage(const float* up, const float* down, float base, int R) {
  int sx[hierarchy::kSites], sy[hierarchy::kSites];
  site_coords(R, sx, sy);
  const ColumnClasses c = column_classes(R);
  double p[kThreads];
  for (int t = 0; t < kThreads; ++t) p[t] = columns_thread(up, down, base, sx, sy, R, c, t);
  for (int step = kThreads / 2; step > 0; step /= 2)
    for (int t = 0; t < step; ++t) p[t] += p[t + step];
  return p[0] / (static_cast<double>(R) * R * R);
}

}  // namespace split
}  // namespace ops
}  // namespace fieldbrain
