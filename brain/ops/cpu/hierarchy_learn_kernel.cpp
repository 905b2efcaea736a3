// CPU kernels of fieldbrain::hierarchy_observe_, hierarchy_apply_ and error_field_update_
// (brain/ops/hierarchy_learn.h): argument checks and threading (at::parallel_for over robots x
// channels, robots x timescales, or robots) around the arithmetic of
// brain/ops/hierarchy_learn_math.h. Allocates nothing.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include "brain/ops/hierarchy_learn.h"
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

void hierarchy_observe_cpu(const at::Tensor& field, const at::Tensor& sensors,
                           const at::Tensor& facts, const at::Tensor& hpred, const at::Tensor& hist,
                           const at::Tensor& herr0, const at::Tensor& herr1,
                           const at::Tensor& herr2, const at::Tensor& herr3, const at::Tensor& W,
                           const at::Tensor& pending) {
  const at::Tensor herr[4] = {herr0, herr1, herr2, herr3};
  // (Plain ints, not structured bindings: lambdas capture them portably.)
  const auto shape = check_hierarchy_observe_args(field, sensors, facts, hpred, hist, herr, W,
                                                  pending, c10::DeviceType::CPU);
  const int64_t B = shape.first, S = shape.second;
  if (B == 0) return;
  const int64_t R = field.size(2), V = R * R * R, width = h::pending_width(S);
  const float* F = field.data_ptr<float>();
  const float* a = sensors.data_ptr<float>();
  const int64_t* fx = facts.data_ptr<int64_t>();
  const float* hp = hpred.data_ptr<float>();
  float* hi = hist.data_ptr<float>();
  float* he[4] = {herr0.data_ptr<float>(), herr1.data_ptr<float>(), herr2.data_ptr<float>(),
                  herr3.data_ptr<float>()};
  float* w = W.data_ptr<float>();
  float* pend = pending.data_ptr<float>();

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

void hierarchy_apply_cpu(const at::Tensor& field, const at::Tensor& pending) {
  const auto shape = check_hierarchy_apply_args(field, pending, c10::DeviceType::CPU);
  const int64_t B = shape.first, R = shape.second;
  if (B == 0) return;
  const int64_t width = pending.size(1), V = R * R * R;
  float* F = field.data_ptr<float>();
  const float* pend = pending.data_ptr<float>();
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

void error_field_update_cpu(const at::Tensor& e, const at::Tensor& facts, const at::Tensor& ef,
                            const at::Tensor& has_ef, const at::Tensor& boost) {
  const auto shape = check_error_field_args(e, facts, ef, has_ef, boost, c10::DeviceType::CPU);
  const int64_t B = shape.first, R = shape.second;
  if (B == 0) return;
  const int64_t S = e.size(1), V = R * R * R;
  const float* err = e.data_ptr<float>();
  const int64_t* fx = facts.data_ptr<int64_t>();
  float* out = ef.data_ptr<float>();
  float* has = has_ef.data_ptr<float>();
  float* bst = boost.data_ptr<float>();
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

}  // namespace
}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CPU, m) {
  m.impl("hierarchy_observe_", TORCH_FN(fieldbrain::ops::cpu::hierarchy_observe_cpu));
  m.impl("hierarchy_apply_", TORCH_FN(fieldbrain::ops::cpu::hierarchy_apply_cpu));
  m.impl("error_field_update_", TORCH_FN(fieldbrain::ops::cpu::error_field_update_cpu));
}
