// The per-slot arithmetic of the reward attractors' pull (docs/cycle.md step 7.9), shared by the
// CPU and CUDA kernels of fieldbrain::attractor_pull_ (brain/ops/attractor_pull.h). Plain C++.
#pragma once

#include <cmath>
#include <cstdint>

#include "brain/ops/philox.h"  // FIELDBRAIN_HOST_DEVICE

namespace fieldbrain {
namespace ops {

// Columns of the per-slot weight table [B, A, kAttractorWeightColumns] the host fills each cycle.
enum AttractorWeightColumn : int {
  kAttractorWeight = 0,   // strength * 0.95^age * valence * 0.01; 0 for a slot that pulls nothing
  kAttractorValence = 1,  // +1 or -1
  kAttractorWeightColumns = 2,
};

// The sums a robot's pull needs, per channel (double): |F|^2, then per slot F.P and |P|^2.
// Kept per channel and added in channel order, so the result does not depend on how the
// work was spread over threads (CPU) or blocks (CUDA): eager and graph runs agree exactly.
FIELDBRAIN_HOST_DEVICE constexpr int attractor_sums_width(int slots) { return 1 + 2 * slots; }
// The workspace row of one robot: 64 channels of sums.
FIELDBRAIN_HOST_DEVICE constexpr int attractor_workspace_width(int slots) {
  return 64 * attractor_sums_width(slots);
}

// The shadow of the bank (fieldbrain::attractor_pull_'s `shadow` and `shadow_scale`): each
// slot's channel as 16-bit integers q with one float scale s, the value being q * s. Both reads
// of a pull take it instead of the floats (two bytes a value instead of four): the sums, whose
// cosine only decides a coefficient, and the move, which then pulls the field towards the slot
// as the shadow holds it. Fixed point per channel rather than fp16: the error bound is
// absolute, at most half a step of max|P_c| / 32767 (1.5e-5 of the channel's largest value),
// where fp16's is relative, 2^-11 of each value: on the channel's large values, the ones that
// set how far a pulled field can end up from the reference, that is ~30 times smaller (fp16
// moves put rewarded runs ~1e-4 from the float reference after 200 cycles at R = 16; this ~1e-6).
// The rule, the same on every device and in RewardAttractorsImpl::rebuild_shadow's ATen:
//   y = x clamped to +-kAttractorShadowMax, NaN taken as 0 (a huge value saturates: the field
//       stays far below it, see docs/cycle.md);
//   m = max |y| over the channel; s = m / kAttractorShadowLevels (float division);
//   q = round-to-nearest-even(y * (kAttractorShadowLevels / m)), clamped to
//       +-kAttractorShadowLevels; a channel with m = 0 has q = 0 and s = 0.
constexpr float kAttractorShadowMax = 65504.f;
constexpr float kAttractorShadowLevels = 32767.f;

// y of the rule above.
FIELDBRAIN_HOST_DEVICE float attractor_shadow_clamp(float x) {
  if (x != x) return 0.f;
  return x < -kAttractorShadowMax ? -kAttractorShadowMax
                                  : (x > kAttractorShadowMax ? kAttractorShadowMax : x);
}

// s and the quantisation factor of a channel whose largest |y| is m (m >= 0, finite).
struct AttractorShadowStep {
  float scale = 0.f, inverse = 0.f;
};
FIELDBRAIN_HOST_DEVICE AttractorShadowStep attractor_shadow_step(float max_abs) {
  AttractorShadowStep step;
  if (max_abs > 0.f) {
    step.scale = max_abs / kAttractorShadowLevels;
    step.inverse = kAttractorShadowLevels / max_abs;
  }
  return step;
}

// q of the rule above for one y (rintf: round to nearest even, as the vector conversions).
FIELDBRAIN_HOST_DEVICE int16_t attractor_shadow_level(float y, float inverse) {
  float r = rintf(y * inverse);
  r = r < -kAttractorShadowLevels ? -kAttractorShadowLevels
                                  : (r > kAttractorShadowLevels ? kAttractorShadowLevels : r);
  return static_cast<int16_t>(r);
}

// The coefficient of (P - F) for one slot: weight * gate(cos), cos = F.P / max(|F| |P|, 1e-8)
// (cosine_similarity with eps = 1e-8), gate = (1 + cos)/2 for valence > 0, (1 - cos)/2 below.
FIELDBRAIN_HOST_DEVICE double attractor_coefficient(double weight, double valence, double ff,
                                                    double fp, double pp) {
  const double norm = sqrt(ff * pp);
  const double cosv = fp / (norm > 1e-8 ? norm : 1e-8);
  const double gate = valence > 0 ? (1.0 + cosv) / 2.0 : (1.0 - cosv) / 2.0;
  return weight * gate;
}

// One call of fieldbrain::attractor_record_ / attractor_pull_ as their kernels take it
// (brain/ops/attractor_pull.h): B robots, A slots, R^3 voxels per channel.
struct AttractorRecordArgs {
  float* bank = nullptr;          // [B,A,64,R,R,R]
  int16_t* shadow = nullptr;      // null, or the bank's shadow: the slot's copy goes there too
  float* shadow_scale = nullptr;  // [B,A,64], with shadow
  const float* field = nullptr;   // [B,64,R,R,R]
  const int64_t* slot = nullptr;  // [B], robot b's slot at slot[b * slot_stride]
  int64_t slot_stride = 1;
  int64_t batch = 0, slots = 0, resolution = 0;
};
struct AttractorPullArgs {
  float* field = nullptr;          // [B,64,R,R,R], written whole: next + the pull
  const float* next = nullptr;     // [B,64,R,R,R], the field after step 7.8 (may be `field`)
  float* bank = nullptr;           // [B,A,64,R,R,R]
  int16_t* shadow = nullptr;       // [B,A,64,R,R,R] the bank's levels (kAttractorShadowLevels)
  float* shadow_scale = nullptr;   // [B,A,64] each channel's step: a value is level * step
  const float* weights = nullptr;  // [B,A,kAttractorWeightColumns]
  double* workspace = nullptr;     // [B, attractor_workspace_width(A)]
  // Step 6's store, done by the same call before the pull: bank[b, slot[b]] = source[b] for
  // every robot with slot[b] >= 0 (what attractor_record_ does), and its copy into the
  // shadow. `source` may be `field` (it is read before the field is written).
  const float* source = nullptr;  // [B,64,R,R,R]
  const int64_t* slot = nullptr;  // [B], robot b's slot at slot[b * slot_stride]
  int64_t slot_stride = 1;
  int64_t batch = 0, slots = 0, resolution = 0;
  // The call's step-6 store as attractor_record_'s arguments.
  AttractorRecordArgs record() const {
    AttractorRecordArgs r;
    r.bank = bank;
    r.shadow = shadow;
    r.shadow_scale = shadow_scale;
    r.field = source;
    r.slot = slot;
    r.slot_stride = slot_stride;
    r.batch = batch;
    r.slots = slots;
    r.resolution = resolution;
    return r;
  }
};

}  // namespace ops
}  // namespace fieldbrain
