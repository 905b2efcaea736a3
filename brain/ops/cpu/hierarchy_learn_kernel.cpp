// CPU kernels of fieldbrain::hierarchy_observe_, hierarchy_apply_ and error_field_update_
// (brain/ops/hierarchy_learn.h): argument checks and threading (at::parallel_for over robots x
// channels, robots x timescales, or robots) around the arithmetic of
// brain/ops/hierarchy_learn_math.h. Allocates nothing.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "brain/ops/cpu/kernels.h"
#include "brain/ops/cycle_layout.h"
#include "brain/ops/hierarchy_learn_math.h"

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace {

namespace h = hierarchy;

// Mean of one [R,R,R] channel: float partial sums over 16 lanes within an x-plane (short
// enough to stay accurate, and vectorisable), added up in double.
float cycle_start_channel_mean(const float* p, int64_t R) {
  constexpr int kLanes = 16;
  const int64_t plane = R * R;
  double total = 0.0;
  for (int64_t x = 0; x < R; ++x, p += plane) {
    float lane[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= plane; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) lane[l] += p[i + l];
    }
    double s = 0.0;
    for (; i < plane; ++i) s += static_cast<double>(p[i]);
    for (int l = 0; l < kLanes; ++l) s += static_cast<double>(lane[l]);
    total += s;
  }
  return static_cast<float>(total / static_cast<double>(plane * R));
}

}  // namespace

void run(const HierarchyObserveArgs& args) {
  const int64_t B = args.batch, S = args.sensory_dim;
  if (B == 0) return;
  const int64_t R = args.resolution, V = R * R * R, width = h::pending_width(S);
  const float* F = args.field;
  const float* a = args.sensors;
  const int64_t* fx = args.facts;
  const float* hp = args.hpred;
  float* hi = args.hist;
  float* const* he = args.herr;
  float* w = args.W;
  float* pend = args.pending;

  // enc: the channel means of the field at cycle start.
  at::parallel_for(0, B * h::kChannels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / h::kChannels, c = t % h::kChannels;
      pend[b * width + h::kPendingMeans + c] = cycle_start_channel_mean(F + t * V, R);
    }
  });
  // One task per (robot, timescale): targets, error ring, pending cubes, W[k].
  at::parallel_for(0, B * h::kTimescales, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / h::kTimescales;
      const int k = static_cast<int>(t % h::kTimescales);
      const int64_t* f = fx + b * kFactColumns;
      const int64_t n = f[kFactCycle], h_before = f[kFactHistCount];
      const float* ab = a + b * S;
      float* hist_b = hi + b * h::kHistCapacity * S;
      float* row = pend + b * width;
      float* targets = row + h::kPendingTargets + k * S;
      const float* hp_k = hp + (b * h::kTimescales + k) * S;
      for (int64_t s = 0; s < S; ++s) targets[s] = h::timescale_target(ab, hist_b, h_before, S, s, k);
      // The push of this cycle's input (the other timescales never read its slot, see
      // timescale_target).
      if (k == 0) {
        float* slot = hist_b + (h_before % h::kHistCapacity) * S;
        for (int64_t s = 0; s < S; ++s) slot[s] = ab[s];
      }
      h::timescale_finish(n, h_before, f[kFactHerrCount0 + k], hp_k, he[k] + b * h::kHerrCapacity,
                          row, S, k);
      if (!h::timescale_active(n, h_before + 1, k)) continue;
      float* w_k = w + (b * h::kTimescales + k) * h::kSites * S;
      for (int64_t j = 0; j < h::kSites; ++j) {
        const float enc = row[h::kPendingMeans + k * h::kSites + j];
        for (int64_t s = 0; s < S; ++s) {
          w_k[j * S + s] = h::learned_weight(w_k[j * S + s], enc, targets[s], hp_k[s], k);
        }
      }
    }
  });
}

void run(const HierarchyApplyArgs& args) {
  const int64_t B = args.batch, R = args.resolution;
  if (B == 0) return;
  const int64_t width = args.pending_width, V = R * R * R;
  float* F = args.field;
  const float* pend = args.pending;
  const int r = static_cast<int>(R);
  at::parallel_for(0, B * h::kChannels, 8, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / h::kChannels;
      const int c = static_cast<int>(t % h::kChannels), i = c % h::kSites;
      const float* row = pend + b * width;
      const int s = h::pending_spread(row, c);
      if (s == 0) continue;
      const float value = h::pending_value(row, c);
      float* channel = F + t * V;
      for (int x = h::cube_lo(i, s, 0, r); x < h::cube_hi(i, s, 0, r); ++x) {
        for (int y = h::cube_lo(i, s, 1, r); y < h::cube_hi(i, s, 1, r); ++y) {
          float* line = channel + (static_cast<int64_t>(x) * R + y) * R;
          for (int z = h::cube_lo(i, s, 2, r); z < h::cube_hi(i, s, 2, r); ++z) line[z] = line[z] + value;
        }
      }
    }
  });
}

void run(const ErrorFieldArgs& args) {
  const int64_t B = args.batch, R = args.resolution;
  if (B == 0) return;
  const int64_t S = args.sensory_dim, V = R * R * R;
  const float* err = args.e;
  const int64_t* fx = args.facts;
  float* out = args.ef;
  float* has = args.has_ef;
  float* bst = args.boost;
  const int r = static_cast<int>(R);
  at::parallel_for(0, B, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      if (fx[b * kFactColumns + kFactCycle] < 1) continue;  // nothing scored yet
      float up[h::kSites], down[h::kSites];
      const float base = h::error_field_terms(err + b * S, S, up, down);
      // Ef depends on z only through |z - R/2|: in {0, 1}, 2, or beyond (the constant).
      const int mid = r / 2, far = mid + 2 < r ? mid + 2 : mid - 2;
      float* robot = out + b * V;
      double abs_sum = 0.0;
      for (int x = 0; x < r; ++x) {
        for (int y = 0; y < r; ++y) {
          const float near_value = h::error_field_value(up, down, base, r, x, y, mid);
          const float edge_value = h::error_field_value(up, down, base, r, x, y, far);
          float* line = robot + (static_cast<int64_t>(x) * R + y) * R;
          double line_sum = 0.0;
          for (int z = 0; z < r; ++z) {
            const int dz = h::distance(z, mid);
            const float v = dz <= 1 ? near_value : dz == 2 ? edge_value : base;
            line[z] = v;
            line_sum += static_cast<double>(v < 0.0f ? -v : v);
          }
          abs_sum += line_sum;
        }
      }
      has[b] = 1.0f;
      bst[b] = h::error_boost(static_cast<float>(abs_sum / static_cast<double>(V)));
    }
  });
}

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
