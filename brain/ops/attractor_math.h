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

// The half-precision shadow of the bank (fieldbrain::attractor_pull_'s `shadow`): IEEE fp16 bits,
// each value clamped to +-kAttractorHalfMax first (saturation: a huge field value becomes the
// largest half, never inf; NaN stays NaN), rounded to nearest even. Only the cosine gate's sums
// read it: an fp16 rounding error is 2^-11 relative with a random sign, so on a dot product of
// ~10^6 terms the cosine moves by ~1e-7 relatively while the bytes read are halved.
constexpr float kAttractorHalfMax = 65504.f;

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
  uint16_t* shadow = nullptr;     // null, or the bank's fp16 shadow: the slot's copy goes there too
  const float* field = nullptr;   // [B,64,R,R,R]
  const int64_t* slot = nullptr;  // [B], robot b's slot at slot[b * slot_stride]
  int64_t slot_stride = 1;
  int64_t batch = 0, slots = 0, resolution = 0;
};
struct AttractorPullArgs {
  float* field = nullptr;          // [B,64,R,R,R], written whole: next + the pull
  const float* next = nullptr;     // [B,64,R,R,R], the field after step 7.8 (may be `field`)
  float* bank = nullptr;           // [B,A,64,R,R,R]
  uint16_t* shadow = nullptr;      // [B,A,64,R,R,R] fp16 bits of the bank (kAttractorHalfMax)
  const float* weights = nullptr;  // [B,A,kAttractorWeightColumns]
  double* workspace = nullptr;     // [B, attractor_workspace_width(A)]
  // Step 6's store, done by the same call before the pull: bank[b, slot[b]] = source[b] for
  // every robot with slot[b] >= 0 (what attractor_record_ does), and its fp16 copy into the
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
