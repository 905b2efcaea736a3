// The per-robot arithmetic of fieldbrain's hierarchy-learning operators (brain/ops/hierarchy_learn.h:
// docs/cycle.md steps 2, 3 and 7.10), once, for the CPU kernel (which calls it in loops) and the
// CUDA kernel (which calls it from its threads). Plain C++17 over raw pointers, no LibTorch.
//
// Every float operation that the ATen path (brain/hierarchical_predictor.cpp,
// brain/prediction_error_field.cpp) performs elementwise is performed here in the same order on
// the same float32 values, so those results agree bit for bit; means (over the field's channels,
// the history ring, the sensors and the error field) are accumulated in double and rounded once,
// which differs from ATen's float reductions only by rounding (about 1e-7 relative).
#pragma once

#include <cstdint>

#include "brain/ops/cycle_layout.h"
#include "brain/ops/philox.h"  // FIELDBRAIN_HOST_DEVICE

namespace fieldbrain {
namespace ops {
namespace hierarchy {

// The kernels read the fact table's kFactCycle, kFactHistCount and kFactHerrCount0 + k
// (brain/ops/cycle_layout.h, as are the rings' capacities).
using fieldbrain::kHerrCapacity;
using fieldbrain::kHistCapacity;
constexpr int kTimescales = 4;
constexpr int kSites = 16;           // enc2field sites; sensor j belongs to site j mod 16
constexpr int kChannels = 64;

// The per-robot scratch row `pending` [B, pending_width(S)] float, written by
// hierarchy_observe_ every cycle for every robot and read by hierarchy_apply_ (step 7.10):
constexpr int kPendingMeans = 0;     // [64] mean_xyz of the field at cycle start (enc_k rows)
constexpr int kPendingValues = 64;   // [4][16] t_k[i]·(0.5 + m_k), written on cube(i, spread_k)
constexpr int kPendingSpread = 128;  // [4] spread_k as a float; 0 = the timescale writes nothing
constexpr int kPendingError = 132;   // [4] m_k = mean|e_k| (0 for an inactive timescale)
constexpr int kPendingTargets = 136; // [4][S] the targets t_k
FIELDBRAIN_HOST_DEVICE int64_t pending_width(int64_t S) { return kPendingTargets + 4 * S; }

FIELDBRAIN_HOST_DEVICE float learning_rate(int k) {
  return k == 0 ? 0.3f : k == 1 ? 0.1f : k == 2 ? 0.03f : 0.01f;
}
// How many of the newest history items timescale k averages (k = 0 is the input itself).
FIELDBRAIN_HOST_DEVICE int timescale_window(int k) {
  return k == 0 ? 1 : k == 1 ? 10 : k == 2 ? 100 : 1000;
}
using fieldbrain::timescale_active;  // step 2's rule (brain/ops/cycle_layout.h)

// Site i's coordinate along `axis` (0 x, 1 y, 2 z) at resolution R (brain/sensor_sites.h).
FIELDBRAIN_HOST_DEVICE int site_coord(int i, int axis, int R) {
  if (axis == 2) return R / 2;
  const int q = axis == 0 ? i % 4 : i / 4;
  return static_cast<int>(static_cast<double>(q * R) / 4.0 + static_cast<double>(R) / 8.0);
}
FIELDBRAIN_HOST_DEVICE int distance(int a, int b) { return a > b ? a - b : b - a; }
// Half-open bounds [lo, hi) of cube(i, s) along `axis`, clipped to [0, R).
FIELDBRAIN_HOST_DEVICE int cube_lo(int i, int s, int axis, int R) {
  const int c = site_coord(i, axis, R) - s;
  return c < 0 ? 0 : c;
}
FIELDBRAIN_HOST_DEVICE int cube_hi(int i, int s, int axis, int R) {
  const int c = site_coord(i, axis, R) + s + 1;
  return c > R ? R : c;
}

// ---- Step 2: hierarchical errors --------------------------------------------------------------

// t_k[s] for robot row pointers `a` [S] and `hist` [1000,S], with `h_before` the history count
// before this cycle's push (the push of `a` itself is counted: h = h_before + 1). Age 0 is `a`
// (the item the push writes); ages >= 1 are read from the ring as it was before the push, so a
// thread computing a target never reads the slot another thread is writing.
FIELDBRAIN_HOST_DEVICE float timescale_target(const float* a, const float* hist, int64_t h_before,
                                              int64_t S, int64_t s, int k) {
  if (k == 0) return a[s];
  const int64_t h = h_before + 1;
  const int64_t window = timescale_window(k);
  const int64_t n = h < window ? h : window;  // window <= capacity: all of these are valid
  double sum = static_cast<double>(a[s]);
  int64_t slot = h_before % kHistCapacity;  // the slot of age 0
  for (int64_t age = 1; age < n; ++age) {
    slot = slot == 0 ? kHistCapacity - 1 : slot - 1;
    sum += static_cast<double>(hist[slot * S + s]);
  }
  return static_cast<float>(sum / static_cast<double>(n));
}

// m_k = mean_s |t_k[s] - hpred_k[s]|.
FIELDBRAIN_HOST_DEVICE float timescale_error(const float* t, const float* hp, int64_t S) {
  double sum = 0.0;
  for (int64_t s = 0; s < S; ++s) {
    const float e = t[s] - hp[s];
    sum += static_cast<double>(e < 0.0f ? -e : e);
  }
  return static_cast<float>(sum / static_cast<double>(S));
}

// W[k,j,s] += lr_k · (enc_k[j] · e_k[s]) (the ATen path's products in its order).
FIELDBRAIN_HOST_DEVICE float learned_weight(float w, float enc, float t, float hp, int k) {
  return w + (enc * (t - hp)) * learning_rate(k);
}

// The scalar part of timescale k for one robot, after its targets t [S] are in place:
// m_k, the error ring push (slot herr_count mod 50 of `herr` [50]) and the pending cubes'
// values and spread in `pending` (the robot's row).
FIELDBRAIN_HOST_DEVICE void timescale_finish(int64_t n, int64_t h_before, int64_t herr_count,
                                             const float* hp, float* herr, float* pending,
                                             int64_t S, int k) {
  const bool active = timescale_active(n, h_before + 1, k);
  const float* t = pending + kPendingTargets + k * S;
  const float m = active ? timescale_error(t, hp, S) : 0.0f;
  if (active) herr[herr_count % kHerrCapacity] = m;
  pending[kPendingError + k] = m;
  const bool write = active && m > 0.01f;
  float spread = 0.0f;
  if (write) {
    const float tenfold = m * 10.0f;  // clamp(int(10·m), 1, 3); int() truncates
    spread = tenfold >= 3.0f ? 3.0f : static_cast<float>(static_cast<int>(tenfold));
    if (spread < 1.0f) spread = 1.0f;
  }
  pending[kPendingSpread + k] = spread;
  const float scale = m + 0.5f;
  for (int64_t i = 0; i < kSites; ++i) {
    pending[kPendingValues + k * kSites + i] = write && i < S ? t[i] * scale : 0.0f;
  }
}

// ---- Step 7.10: F += U_h ------------------------------------------------------------------------

// The cube of channel c = 16k + i that step 7.10 adds to: half-width spread_k (0 = nothing to
// add this cycle) and the value added on it.
FIELDBRAIN_HOST_DEVICE int pending_spread(const float* pending, int c) {
  return static_cast<int>(pending[kPendingSpread + c / kSites]);
}
FIELDBRAIN_HOST_DEVICE float pending_value(const float* pending, int c) {
  return pending[kPendingValues + c];
}

// ---- Step 3: the prediction-error field -------------------------------------------------------

// The per-site terms of Ef for one robot from its error e [S]: up[i] on cube(i,1) (added) and
// down[i] on cube(i,2) (subtracted), for i < min(S,16); returns the constant 0.05·mean|e|.
FIELDBRAIN_HOST_DEVICE float error_field_terms(const float* e, int64_t S, float* up, float* down) {
  double abs_sum = 0.0;
  for (int64_t j = 0; j < S; ++j) abs_sum += static_cast<double>(e[j] < 0.0f ? -e[j] : e[j]);
  for (int i = 0; i < kSites; ++i) {
    up[i] = 0.0f;
    down[i] = 0.0f;
    if (i >= S) continue;
    float sum = 0.0f;  // the signed mean of the site's sensors, summed in order of j (B7 kept)
    int64_t count = 0;
    for (int64_t j = i; j < S; j += kSites, ++count) sum += e[j];
    const float avg = sum / static_cast<float>(count);
    if (avg > 0.1f) {
      const float twice = avg * 2.0f;
      up[i] = twice > 1.0f ? 1.0f : twice;
    } else {
      down[i] = (1.0f - avg) * 0.1f;
    }
  }
  return static_cast<float>(abs_sum / static_cast<double>(S)) * 0.05f;
}

// Ef at voxel (x, y, z): the site terms in site order (cube(i,1) then cube(i,2), as the ATen path
// accumulates them), then the constant.
FIELDBRAIN_HOST_DEVICE float error_field_value(const float* up, const float* down, float base,
                                               int R, int x, int y, int z) {
  float v = 0.0f;
  const int dz = distance(z, R / 2);
  if (dz <= 2) {
    for (int i = 0; i < kSites; ++i) {
      const int d = distance(x, site_coord(i, 0, R)) > distance(y, site_coord(i, 1, R))
                        ? distance(x, site_coord(i, 0, R))
                        : distance(y, site_coord(i, 1, R));
      const int reach = d > dz ? d : dz;
      if (reach <= 1) v = v + up[i];
      if (reach <= 2) v = v - down[i];
    }
  }
  return v + base;
}

// boost = min(3, 1 + 4·mean|Ef|) from the mean.
FIELDBRAIN_HOST_DEVICE float error_boost(float mean_abs) {
  const float b = 1.0f + mean_abs * 4.0f;
  return b > 3.0f ? 3.0f : b;
}

}  // namespace hierarchy

// One call of each hierarchy operator as its kernels take it (brain/ops/hierarchy_learn.h).
struct HierarchyObserveArgs {
  const float* field = nullptr;    // [B,64,R,R,R]
  const float* sensors = nullptr;  // [B,S]
  const int64_t* facts = nullptr;  // [B,kFactColumns]
  const float* hpred = nullptr;    // [B,4,S]
  float* hist = nullptr;           // [B,1000,S]
  float* herr[4] = {nullptr, nullptr, nullptr, nullptr};  // [B,50] each
  float* W = nullptr;              // [B,4,16,S]
  float* pending = nullptr;        // [B, pending_width(S)]
  int64_t batch = 0, sensory_dim = 0, resolution = 0;
};
struct HierarchyApplyArgs {
  float* field = nullptr;          // [B,64,R,R,R]
  const float* pending = nullptr;  // [B, pending_width]
  int64_t batch = 0, resolution = 0, pending_width = 0;
};
struct ErrorFieldArgs {
  const float* e = nullptr;        // [B,S]
  const int64_t* facts = nullptr;  // [B,kFactColumns]
  float* ef = nullptr;             // [B,R,R,R]
  float* has_ef = nullptr;         // [B]
  float* boost = nullptr;          // [B]
  int64_t batch = 0, sensory_dim = 0, resolution = 0;
};

}  // namespace ops
}  // namespace fieldbrain
