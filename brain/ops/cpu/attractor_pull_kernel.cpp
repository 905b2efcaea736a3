// CPU kernels of fieldbrain::attractor_record_ / attractor_pull_ (brain/ops/attractor_pull.h),
// on the torch-free arguments their prepare returns (brain/ops/attractor_math.h):
// at::parallel_for over (robot, channel). The pull reads each pulling slot twice per cycle, the
// floor of its arithmetic (docs/cycle.md "What a reward costs"): once for the sums its
// coefficients need, whose totals over the whole field must be known before any voxel moves,
// then once to move the field, written out of place from `next` (step 7.10 then needs no copy
// of its own); both from the bank's 16-bit shadow (half the bytes of the floats,
// brain/ops/attractor_math.h). Zero-weight slots are never read. The pull's first pass also
// does step 6's store: it copies the source's channel into the planned slot (streaming stores:
// the bank is not read for it) and into its shadow, and takes that slot's sums from the shadow
// channel it has just written, so a store costs no pass of its own. The second pass walks each
// thread's channels backwards, starting with the channels (of `next` and of the shadow) the
// first pass read last, which the L3 may still hold. The inner loops are the field step's
// per-instruction-set passes (cpu/field_step_passes.h: attractor_to_shadow, attractor_sums,
// attractor_apply); the per-channel sums go to the caller's workspace and are added in channel
// order, so a robot's result does not depend on the batch or the thread count. The lists of
// pulling slots are per-thread scratch grown on first use: the steady state allocates nothing.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "brain/ops/attractor_math.h"
#include "brain/ops/cpu/field_step_passes.h"
#include "brain/ops/cpu/kernels.h"

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace {

// Every robot's slot is below A (-1: no store); a clear error otherwise.
void check_slots(const char* op, const int64_t* slot, int64_t stride, int64_t B, int64_t A) {
  for (int64_t b = 0; b < B; ++b) {
    const int64_t j = slot[b * stride];
    TORCH_CHECK(j < A, op, ": slot ", j, " of robot ", b, " is beyond the bank's ", A, " slots");
  }
}

// dst[0..n) = src[0..n). Streaming stores where aligned: a slot is written whole and read
// only later, so fetching its old bytes into the cache first (what a plain copy does) would
// be wasted traffic. Fenced, so the copy is visible to any thread that reads it next.
void copy_channel(float* dst, const float* src, int64_t n) {
#if defined(__SSE2__)
  if (reinterpret_cast<uintptr_t>(dst) % 16 == 0 && n % 4 == 0) {
    for (int64_t i = 0; i < n; i += 4) _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
    _mm_sfence();
    return;
  }
#endif
  std::memcpy(dst, src, sizeof(float) * n);
}

// Step 6's store of channel c of robot b into slot j: the floats, and their shadow when the
// call keeps one (attractor_pull_).
void store_channel(const AttractorRecordArgs& a, int64_t b, int64_t j, int64_t c,
                   const float* src) {
  const int64_t V = a.resolution * a.resolution * a.resolution;
  const int64_t channel = (b * a.slots + j) * 64 + c;
  copy_channel(a.bank + channel * V, src, V);
  if (a.shadow != nullptr) {
    a.shadow_scale[channel] = chosen_passes().attractor_to_shadow(src, a.shadow + channel * V, V);
  }
}

// Grows a per-thread array on first use (worker threads each have their own).
template <typename T>
T* attractor_thread_array(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

}  // namespace

void run(const AttractorRecordArgs& a) {
  const int64_t B = a.batch, A = a.slots, V = a.resolution * a.resolution * a.resolution;
  check_slots("fieldbrain::attractor_record_", a.slot, a.slot_stride, B, A);
  at::parallel_for(0, B * 64, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / 64, c = t % 64, j = a.slot[b * a.slot_stride];
      if (j < 0) continue;
      store_channel(a, b, j, c, a.field + (b * 64 + c) * V);
    }
  });
}

namespace {

// The pull's per-call plan: per robot its pulling slots (count, then slot indices) and the
// slot it stores into (-1: none).
struct PullPlan {
  int64_t* live;   // [B, A + 1]
  int64_t* store;  // [B]
  bool any = false;
};

PullPlan plan_pull(const AttractorPullArgs& a) {
  const int64_t B = a.batch, A = a.slots;
  thread_local std::vector<int64_t> plan_v;
  int64_t* mem = attractor_thread_array(plan_v, static_cast<size_t>(B * (A + 2)));
  PullPlan plan{mem, mem + B * (A + 1)};
  for (int64_t b = 0; b < B; ++b) {
    int64_t* row = plan.live + b * (A + 1);
    const int64_t s = a.slot[b * a.slot_stride];
    row[0] = 0;
    plan.store[b] = s;
    for (int64_t j = 0; j < A; ++j) {
      if (a.weights[(b * A + j) * kAttractorWeightColumns + kAttractorWeight] == 0.f) continue;
      row[1 + row[0]++] = j;
    }
    plan.any = plan.any || row[0] > 0 || s >= 0;
  }
  return plan;
}

}  // namespace

void run(const AttractorPullArgs& a) {
  const int64_t B = a.batch, A = a.slots, V = a.resolution * a.resolution * a.resolution;
  if (B == 0 || V == 0) return;
  check_slots("fieldbrain::attractor_pull_", a.slot, a.slot_stride, B, A);
  const int64_t width = attractor_sums_width(static_cast<int>(A));
  const float* next = a.next;
  const float* w = a.weights;
  double* sums_p = a.workspace;
  const FieldStepPasses& passes = chosen_passes();
  const PullPlan plan = plan_pull(a);
  const AttractorRecordArgs record = a.record();
  thread_local std::vector<float> coef_v;  // per robot, its pulling slots' coefficients
  float* coef = attractor_thread_array(coef_v, static_cast<size_t>(B * A));
  auto channel_at = [&](int64_t b, int64_t j, int64_t c) { return (b * A + j) * 64 + c; };
  // Channel c of robot b's pulling slots in slot order: their shadow levels and steps (read
  // after the channel's store); returns how many.
  auto gather = [&](int64_t b, int64_t c, const int16_t** levels, float* steps) {
    const int64_t* row = plan.live + b * (A + 1);
    for (int64_t l = 0; l < row[0]; ++l) {
      const int64_t at = channel_at(b, row[1 + l], c);
      levels[l] = a.shadow + at * V;
      steps[l] = a.shadow_scale[at];
    }
    return row[0];
  };
  // Runs fn(t = b * 64 + c, levels, steps) for every (robot, channel), in parallel over
  // channels, with per-thread scratch for gather; `backwards` walks each thread's share from
  // its end.
  auto each_channel = [&](bool backwards, auto&& fn) {
    at::parallel_for(0, B * 64, 1, [&](int64_t begin, int64_t end) {
      thread_local std::vector<const int16_t*> levels_v;
      thread_local std::vector<float> steps_v;
      const int16_t** levels = attractor_thread_array(levels_v, static_cast<size_t>(A));
      float* steps = attractor_thread_array(steps_v, static_cast<size_t>(A));
      for (int64_t k = begin; k < end; ++k) fn(backwards ? begin + end - 1 - k : k, levels, steps);
    });
  };
  // Pass 1: step 6's store (floats and shadow), then per channel |F|^2 and each pulling
  // slot's F.P and |P|^2, from its shadow. The stored slot's sums read its shadow channel just
  // written, so they are those of a slot stored by attractor_record_ with its shadow rebuilt.
  // (Taking them from the levels as they are made, in the store's own walk, measured slower:
  // the store then waits on the sums' additions instead of streaming.)
  if (plan.any) {
    each_channel(false, [&](int64_t t, const int16_t** levels, float* steps) {
      const int64_t b = t / 64, c = t % 64, s = plan.store[b];
      if (s >= 0) store_channel(record, b, s, c, a.source + t * V);
      const int64_t n = gather(b, c, levels, steps);
      if (n > 0) passes.attractor_sums(next + t * V, levels, steps, n, V, sums_p + t * width);
    });
  }
  // Each robot's totals, in channel order, and each pulling slot's coefficient.
  for (int64_t b = 0; b < B; ++b) {
    const int64_t* row = plan.live + b * (A + 1);
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
  // Pass 2: field = next + sum_j coef_j (P_j - next) from the shadow, every coefficient from
  // the field before the pull; a robot no slot pulls gets a copy of next. The field is written
  // here, so step 7.10 has no copy of its own (pass 1 has read the source already).
  each_channel(true, [&](int64_t t, const int16_t** levels, float* steps) {
    const int64_t b = t / 64, n = gather(b, t % 64, levels, steps);
    passes.attractor_apply(a.field + t * V, next + t * V, levels, steps, coef + b * A, n, V);
  });
}

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
