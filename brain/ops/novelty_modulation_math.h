// The per-robot arithmetic of fieldbrain::novelty_modulation (brain/ops/novelty_modulation.h):
// docs/cycle.md step 5 (field state, novelty, confidence, modulation) and step 7.6 (sigma),
// written once as FIELDBRAIN_HOST_DEVICE functions over raw pointers. The CPU kernel calls them
// in a loop over robots, the CUDA kernel from one thread block per robot (the 512-element
// sample and the 200 similarities spread over the block, the scalar rest on one thread).
//
// Constants are float32 and the operations follow the order of the ATen method
// (NoveltyModulationImpl::update), so both agree to rounding (sums are accumulated in a
// different order).
#pragma once

#include <cmath>
#include <cstdint>

#include "brain/ops/cycle_layout.h"
#include "brain/ops/philox.h"  // FIELDBRAIN_HOST_DEVICE

namespace fieldbrain {
namespace ops {
namespace modulation {

using fieldbrain::kErrCapacity;  // perr and pimp (brain/ops/cycle_layout.h)
using fieldbrain::kNovCapacity;
constexpr int kNovDim = 512;         // nov's items: 512 sampled corner values
constexpr int kCornerValues = 4096;  // the 8^4 corner block F[0:8, 0:8, 0:8, 0:8]
constexpr int kStepScalars = 8;      // the field step's per-robot scalars (field_step.h)

// The module's per-robot scalars, in the order of the operator's `state` list.
enum StateColumn : int {
  kSi = 0,
  kSc,
  kPlateau,
  kSigma,
  kPrevImp,
  kPrevAmp,
  kNovelty,
  kDrive,
  kExplore,
  kAmp,
  kImp,
  kDecay,
  kInfo,
  kStateCount,
};

// The columns of the field step's scalars [B,8] (FieldDynamics: decay, drive, explore, sigma,
// has_ef, then unused zeros).
enum StepScalarColumn : int {
  kStepDecay = 0,
  kStepDrive,
  kStepExplore,
  kStepSigma,
  kStepHasEf,
};

// Every tensor of the operator as a raw pointer; all contiguous with the robot on dimension 0
// except `stats`, whose rows are `stats_stride` floats apart (a slice of the read-out).
struct ModulationArrays {
  const float* field;         // [B,64,R,R,R]
  const float* last_err;      // [B,S]
  const float* stats;         // [B, >= 2]: mean|F[0:48]|, unbiased var(F[0:48])
  const int64_t* facts;       // [B, kFactColumns] (brain/ops/cycle_layout.h)
  const float* values;        // [B, kValueColumns]
  const float* has_ef;        // [B]
  const float* boost;         // [B]
  float* nov;                 // [B,200,512]
  int64_t* nov_ts;            // [B,200]
  float* perr;                // [B,50]
  float* pimp;                // [B,50]
  float* state[kStateCount];  // each [B]
  float* step_scalars;        // [B,8]
  int64_t resolution;
  int64_t sensory_dim;
  int64_t stats_stride;
  int64_t batch;  // B
};

FIELDBRAIN_HOST_DEVICE float min_f(float a, float hi) { return a > hi ? hi : a; }  // NaN kept
FIELDBRAIN_HOST_DEVICE float max_f(float a, float lo) { return a < lo ? lo : a; }  // NaN kept

// Offset in robot b's field of sample i (0..511): nov_idx = int(i·4095/511) indexes the corner
// block permuted to legacy order (x, y, z, c) and flattened.
FIELDBRAIN_HOST_DEVICE int64_t corner_offset(int i, int64_t R) {
  const int k = static_cast<int>(static_cast<double>(i) * 4095.0 / 511.0);
  const int x = k / 512, y = (k / 64) % 8, z = (k / 8) % 8, c = k % 8;
  return static_cast<int64_t>(c) * R * R * R + (static_cast<int64_t>(x) * R + y) * R + z;
}

// exp(-age/500) for memory entry j of a robot at cycle n, or a negative value when the entry
// does not take part (j beyond the valid slots, or age >= 1000).
FIELDBRAIN_HOST_DEVICE float memory_weight(int64_t n, int64_t ts, int j, int64_t nov_count) {
  const int64_t valid = nov_count < kNovCapacity ? nov_count : kNovCapacity;
  if (j >= valid || n - ts >= 1000) return -1.0f;
  const float age = static_cast<float>(n - ts);
  return expf(-age / 500.0f);
}

// Mean of ring items with age in [k1, k2) (docs/cycle.md "Ring buffers"): summed in slot order,
// divided by min(k2, count) - k1; 0 when that is <= 0.
FIELDBRAIN_HOST_DEVICE float ring_mean_ages(const float* data, int64_t count, int N, int64_t k1,
                                            int64_t k2) {
  const int64_t denom = (k2 < count ? k2 : count) - k1;
  if (denom <= 0) return 0.0f;
  const int64_t valid = count < N ? count : N;
  const int64_t hi = k2 < valid ? k2 : valid;
  float sum = 0.0f;
  for (int j = 0; j < N; ++j) {
    const int64_t age = ((count - 1 - j) % N + N) % N;
    if (age >= k1 && age < hi) sum += data[j];
  }
  return sum / static_cast<float>(denom);
}

// Everything of steps 5 and 7.6 for robot b after the novelty search: `best` is the largest
// weighted similarity of the normalised sample to the memory (-1 when no entry took part).
// Writes the state, pushes to perr/pimp (slots from the counts in facts; the host advances the
// counts), fills the field step's scalars with sigma BEFORE its update, then updates sigma.
// Does not write the nov ring (the caller copies the sample in once every reader is done).
FIELDBRAIN_HOST_DEVICE void finish_robot(const ModulationArrays& a, int64_t b, float best) {
  const int64_t* f = a.facts + b * kFactColumns;
  const int64_t n = f[kFactCycle];
  const bool has_input = f[kFactHasInput] != 0;
  const bool scored = a.values[b * kValueColumns + kValueScored] > 0.5f;
  float* s[kStateCount];
  for (int k = 0; k < kStateCount; ++k) s[k] = a.state[k] + b;

  // Information.
  const float info_now = a.stats[b * a.stats_stride];
  const float var = a.stats[b * a.stats_stride + 1];
  *s[kSi] = *s[kSi] * 0.95f + info_now * 0.05f * (1.0f + var);
  *s[kInfo] = info_now;

  // Novelty.
  float nov_val = 1.0f;
  if (f[kFactNovCount] > 0) {
    const float wobble = static_cast<float>(0.1 * sin(0.01 * static_cast<double>(n)));
    nov_val = max_f(1.0f - max_f(best, 0.0f) + wobble, 0.0f);
  }
  *s[kNovelty] = nov_val;

  // Confidence: push err_s to perr, then the improvement to pimp, plateau and sc.
  float err_s = 0.3f;
  if (scored) {
    const float* e = a.last_err + b * a.sensory_dim;
    float sum = 0.0f;
    for (int64_t j = 0; j < a.sensory_dim; ++j) sum += fabsf(e[j]);
    err_s = sum / static_cast<float>(a.sensory_dim);
  }
  float* perr = a.perr + b * kErrCapacity;
  float* pimp = a.pimp + b * kErrCapacity;
  const int64_t c = f[kFactPerrCount] + 1;  // after this push
  perr[(c - 1) % kErrCapacity] = err_s;
  const float recent = c > 5 ? ring_mean_ages(perr, c, kErrCapacity, 0, 10) : 0.5f;
  if (pimp_pushes(c)) {
    const int64_t pc = f[kFactPimpCount] + 1;
    pimp[(pc - 1) % kErrCapacity] = ring_mean_ages(perr, c, kErrCapacity, 10, 20) - recent;
    if (pc > 10) {
      const bool flat = fabsf(ring_mean_ages(pimp, pc, kErrCapacity, 0, 10)) < 0.001f;
      *s[kPlateau] = flat ? *s[kPlateau] + 1.0f : 0.0f;
    }
  }
  *s[kSc] = *s[kSc] * 0.9f + 0.1f / (1.0f + recent * 5.0f);

  // Input presence and the modulation.
  const bool dreams = dreaming(cycles_without_input_after(f[kFactCyclesWithoutInput], has_input));
  const float si = *s[kSi], sc = *s[kSc];
  const float nI = min_f(max_f(si / 1.5f, 0.0f), 1.0f);
  const float drive = dreams ? 0.95f : (nI + sc) / 2.0f;
  const float ex = min_f(
      (1.0f - nI) * (nov_val * 0.5f + 0.5f) + min_f(*s[kPlateau] / 200.0f, 0.5f) + 0.3f, 1.0f);
  const float explore = min_f(ex + (1.0f - sc) * 0.2f, 1.0f);
  const float amp = (1.0f - sc) * 0.5f + 1.0f;
  const float imp = (1.0f - drive) * 0.7f + 0.1f;
  const float decay = 0.999f - nI * 0.01f;
  *s[kDrive] = drive;
  *s[kExplore] = explore;
  *s[kAmp] = amp;
  *s[kImp] = imp;
  *s[kDecay] = decay;
  *s[kPrevImp] = imp;  // the imprint of this cycle already used the previous values (B5)
  *s[kPrevAmp] = amp;

  // The field step's scalars, with sigma before step 7.6's update.
  const float has_ef = a.has_ef[b];
  float* out = a.step_scalars + b * kStepScalars;
  out[kStepDecay] = decay;
  out[kStepDrive] = drive;
  out[kStepExplore] = explore;
  out[kStepSigma] = *s[kSigma];
  out[kStepHasEf] = has_ef;
  for (int k = kStepHasEf + 1; k < kStepScalars; ++k) out[k] = 0.0f;

  // Step 7.6: the next self-modification strength.
  const float base = static_cast<float>(0.01 + 0.09 * log10(1.0 + static_cast<double>(n) / 1000.0));
  const float factor = has_ef > 0.5f ? a.boost[b] : 1.0f;
  *s[kSigma] = min_f(base * factor, 0.3f);
}

}  // namespace modulation
}  // namespace ops
}  // namespace fieldbrain
