// CPU kernels of fieldbrain::attractor_record_ / attractor_pull_ (brain/ops/attractor_pull.h),
// on the torch-free arguments their prepare returns (brain/ops/attractor_math.h):
// at::parallel_for over (robot, channel). The pull reads each pulling slot twice per cycle, the
// floor of its arithmetic (docs/cycle.md "What a reward costs"): once for the sums its
// coefficients need, whose totals over the whole field must be known before any voxel moves,
// then once to move the field. Zero-weight slots are never read. The inner loops are the
// field step's per-instruction-set passes (cpu/field_step_passes.h: attractor_sums,
// attractor_apply); the per-channel sums go to the caller's workspace and are added in channel
// order, so a robot's result does not depend on the batch or the thread count. The list of
// pulling slots is per-thread scratch grown on first use: the steady state allocates nothing.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cstring>
#include <vector>

#include "brain/ops/attractor_math.h"
#include "brain/ops/cpu/field_step_passes.h"
#include "brain/ops/cpu/kernels.h"

namespace fieldbrain {
namespace ops {
namespace cpu {

void run(const AttractorRecordArgs& a) {
  const int64_t B = a.batch, A = a.slots, V = a.resolution * a.resolution * a.resolution;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t j = a.slot[b * a.slot_stride];
    TORCH_CHECK(j < A, "fieldbrain::attractor_record_: slot ", j, " of robot ", b,
                " is beyond the bank's ", A, " slots");
  }
  at::parallel_for(0, B * 64, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / 64, c = t % 64, j = a.slot[b * a.slot_stride];
      if (j < 0) continue;
      std::memcpy(a.bank + ((b * A + j) * 64 + c) * V, a.field + (b * 64 + c) * V, sizeof(float) * V);
    }
  });
}

namespace {

// Grows a per-thread array on first use (worker threads each have their own).
template <typename T>
T* attractor_thread_array(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

}  // namespace

void run(const AttractorPullArgs& a) {
  const int64_t B = a.batch, A = a.slots, V = a.resolution * a.resolution * a.resolution;
  if (B == 0 || V == 0) return;
  const int64_t width = attractor_sums_width(static_cast<int>(A));
  float* F = a.field;
  const float* bank_p = a.bank;
  const float* w = a.weights;
  double* sums_p = a.workspace;
  const FieldStepPasses& passes = chosen_passes();
  // Per robot, its pulling slots (count, then slot indices) and their coefficients.
  thread_local std::vector<int64_t> live_v;
  thread_local std::vector<float> coef_v;
  int64_t* live = attractor_thread_array(live_v, static_cast<size_t>(B * (A + 1)));
  float* coef = attractor_thread_array(coef_v, static_cast<size_t>(B * A));
  bool any = false;
  for (int64_t b = 0; b < B; ++b) {
    int64_t* row = live + b * (A + 1);
    row[0] = 0;
    for (int64_t j = 0; j < A; ++j) {
      if (w[(b * A + j) * kAttractorWeightColumns + kAttractorWeight] != 0.f) row[1 + row[0]++] = j;
    }
    any = any || row[0] > 0;
  }
  if (!any) return;
  // The pulling slots' channels c of robot b, in slot order.
  auto channel_of_slots = [&](int64_t b, int64_t c, const float** out) {
    const int64_t* row = live + b * (A + 1);
    for (int64_t l = 0; l < row[0]; ++l) out[l] = bank_p + ((b * A + row[1 + l]) * 64 + c) * V;
    return row[0];
  };
  // Runs fn(t = b * 64 + c, that channel's pulling slots, their count) for every (robot,
  // channel) with at least one pulling slot, in parallel over channels.
  auto each_pulled_channel = [&](auto&& fn) {
    at::parallel_for(0, B * 64, 1, [&](int64_t begin, int64_t end) {
      thread_local std::vector<const float*> ptr_v;
      const float** ptr = attractor_thread_array(ptr_v, static_cast<size_t>(A));
      for (int64_t t = begin; t < end; ++t) {
        const int64_t L = channel_of_slots(t / 64, t % 64, ptr);
        if (L > 0) fn(t, ptr, L);
      }
    });
  };
  // Pass 1: per channel, |F|^2 and each pulling slot's F.P and |P|^2.
  each_pulled_channel([&](int64_t t, const float** ptr, int64_t L) {
    passes.attractor_sums(F + t * V, ptr, L, V, sums_p + t * width);
  });
  // Each robot's totals, in channel order, and each pulling slot's coefficient.
  for (int64_t b = 0; b < B; ++b) {
    const int64_t* row = live + b * (A + 1);
    const double* sums = sums_p + b * 64 * width;
    double ff = 0.0;
    for (int64_t c = 0; c < 64 && row[0] > 0; ++c) ff += sums[c * width];
    for (int64_t l = 0; l < row[0]; ++l) {
      double fp = 0.0, pp = 0.0;
      for (int64_t c = 0; c < 64; ++c) {
        fp += sums[c * width + 1 + 2 * l];
        pp += sums[c * width + 2 + 2 * l];
      }
      const float* wj = w + (b * A + row[1 + l]) * kAttractorWeightColumns;
      coef[b * A + l] = static_cast<float>(
          attractor_coefficient(wj[kAttractorWeight], wj[kAttractorValence], ff, fp, pp));
    }
  }
  // Pass 2: F += sum_j coef_j (P_j - F), every coefficient from the field before the pull.
  each_pulled_channel([&](int64_t t, const float** ptr, int64_t L) {
    passes.attractor_apply(F + t * V, ptr, coef + (t / 64) * A, L, V);
  });
}

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
