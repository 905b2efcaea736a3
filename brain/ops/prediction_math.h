// The per-robot arithmetic of fieldbrain::prediction_score (docs/cycle.md step 1) and
// fieldbrain::prediction_act (steps 8-11), written once for the CPU kernel
// (cpu/prediction_kernel.cpp, a loop per robot) and the CUDA kernels (cuda/prediction_kernel.cu,
// threads per cell, sensor, motor and voxel). Plain C++ over raw pointers (no LibTorch), every
// function FIELDBRAIN_HOST_DEVICE. The float operations follow the ATen methods of the modules
// (brain/next_input_prediction.cpp, spatial_pooling.cpp, motor_generation.cpp, motor_echo.cpp)
// one rounding at a time, so the two paths differ by reduction order only; the CUDA file is
// compiled with --fmad=false for the same reason.
#pragma once

#include <cmath>
#include <cstdint>

#include "brain/ops/cycle_layout.h"
#include "brain/ops/field_readout_layout.h"
#include "brain/ops/philox.h"

namespace fieldbrain {
namespace ops {
namespace prediction {

using fieldbrain::kHerrCapacity;  // brain/ops/cycle_layout.h
using fieldbrain::kRecentCapacity;
constexpr int kTimescales = 4;

// Step 1, every robot of the batch (all arrays contiguous, robot-major).
struct ScoreArgs {
  const float* sensors = nullptr;  // [B,S]
  const int64_t* facts = nullptr;  // [B, facts_stride]: kFactColumns (brain/ops/cycle_layout.h)
  int64_t facts_stride = 0;
  const float* n_active = nullptr;  // [B] active pooled cells of the last cycle
  const float* pred = nullptr;      // [B,S] the last prediction
  float* conf = nullptr;            // [B] updated
  float* last_err = nullptr;        // [B,S] updated for scored robots
  int64_t S = 0;
  int64_t batch = 0;  // B
};

// Steps 8-11, every robot of the batch.
struct ActArgs {
  const float* readout = nullptr;    // [B, kReadoutWidth] of the field after step 7
  const int64_t* facts = nullptr;    // [B, facts_stride]: kFactColumns (brain/ops/cycle_layout.h)
  int64_t facts_stride = 0;
  const int64_t* noise_key = nullptr;  // [B,2] (seed, cycle)
  const float* sensors = nullptr;      // [B,S]
  const float* W = nullptr;            // [B,4,16,S] hierarchical weights
  const float* herr[kTimescales] = {nullptr, nullptr, nullptr, nullptr};  // [B,50] each
  const float* explore = nullptr;      // [B]
  const float* lin = nullptr;          // [R] linspace(-1, 1, R)
  float* recent = nullptr;             // [B,3,S] ring: this cycle's input pushed
  float* active = nullptr;             // [B,64]
  float* n_active = nullptr;           // [B]
  float* temporal = nullptr;           // [B,16,64]
  float* hpred = nullptr;              // [B,4,S]
  float* pred = nullptr;               // [B,S]
  float* pc = nullptr;                 // [B,S]
  float* motor = nullptr;              // [B,M]
  float* field = nullptr;              // [B,64,R,R,R]: channels 62, 63 get the echo
  int64_t S = 0, M = 0, R = 0;
  int64_t batch = 0;  // B
};

// Comparisons that keep a NaN operand like ATen's clamp / maximum.
FIELDBRAIN_HOST_DEVICE float at_most(float x, float hi) { return x > hi ? hi : x; }
FIELDBRAIN_HOST_DEVICE float at_least(float x, float lo) { return x < lo ? lo : x; }

// ---- step 1 ----

// Scores robot b's last prediction: conf and last_err as NextInputPredictionImpl::score.
FIELDBRAIN_HOST_DEVICE void score_robot(const ScoreArgs& a, int64_t b) {
  const int64_t n = a.facts[b * a.facts_stride + kFactCycle];
  if (n < 1) {  // nothing to score yet
    a.conf[b] = 0.5f;
    return;
  }
  const float* s = a.sensors + b * a.S;
  const float* p = a.pred + b * a.S;
  float* e = a.last_err + b * a.S;
  double sum = 0.0;
  for (int64_t j = 0; j < a.S; ++j) {
    e[j] = s[j] - p[j];
    sum += fabsf(e[j]);
  }
  const float err = static_cast<float>(sum) / static_cast<float>(a.S);
  const float mc = at_most(a.n_active[b] / 50.0f, 1.0f);
  const float w = 1.5f - mc * 0.5f;
  const float base = n < 50 ? (1.0f - mc) * 0.2f : 0.0f;
  const float fit = 1.0f - at_most(err * w, 1.0f);
  const float raw = fit > base ? fit : base;
  // m = 0.9 - min(0.2, n/1000) in double (as the host computes it), then rounded once.
  const double nd = static_cast<double>(n);
  const double m = 0.9 - (nd / 1000.0 < 0.2 ? nd / 1000.0 : 0.2);
  a.conf[b] = static_cast<float>(m) * a.conf[b] + static_cast<float>(1.0 - m) * raw;
}

// ---- step 8: spatial pooling from the read-out row of one robot ----

FIELDBRAIN_HOST_DEVICE float pooling_threshold(const float* row) {
  return at_least(row[kReadoutSummary + kSummaryAbsMean] * 0.8f, 0.01f);
}
FIELDBRAIN_HOST_DEVICE float cell_active(const float* row, int64_t cell, float threshold) {
  return row[kReadoutCellActivity + cell] > threshold ? 1.0f : 0.0f;
}
// Signed mean of temporal channel 32 + c (c < 16) over `cell`.
FIELDBRAIN_HOST_DEVICE float cell_temporal(const float* row, int64_t c, int64_t cell) {
  return row[kReadoutCellMean + (32 + c) * kReadoutCells + cell];
}

// ---- step 9 ----

// herr[k]'s count after step 2 of this cycle: it pushed when timescale k was active.
FIELDBRAIN_HOST_DEVICE int64_t herr_count_after(const int64_t* facts_row, int k) {
  const int64_t n = facts_row[kFactCycle], h = facts_row[kFactHistCount] + 1;
  return facts_row[kFactHerrCount0 + k] + (timescale_active(n, h, k) ? 1 : 0);
}

// Mean of a ring's items with age in [k1, k2) (RingBufferImpl::mean_ages): 0 when none.
FIELDBRAIN_HOST_DEVICE float ring_mean_ages(const float* ring, int64_t capacity, int64_t count,
                                            int64_t k1, int64_t k2) {
  const int64_t denom = (k2 < count ? k2 : count) - k1;
  if (denom <= 0) return 0.0f;
  const int64_t valid = count < capacity ? count : capacity;
  const int64_t last = k2 < valid ? k2 : valid;
  double sum = 0.0;
  for (int64_t age = k1; age < last; ++age) sum += ring[((count - 1 - age) % capacity + capacity) % capacity];
  return static_cast<float>(sum) / static_cast<float>(denom);
}

// Confidence of one timescale from its error ring (count after this cycle's push).
FIELDBRAIN_HOST_DEVICE float timescale_confidence(const float* ring, int64_t count) {
  if (count < 5) return 0.5f;
  const float mu1 = ring_mean_ages(ring, kHerrCapacity, count, 0, 10);
  const float mu2 = ring_mean_ages(ring, kHerrCapacity, count, 10, 20);
  float cf = 1.0f - at_most(mu1 * 2.0f, 1.0f);
  if (count > 20 && mu1 < mu2) cf = at_most(cf * 1.1f, 1.0f);
  return cf;
}

// hpred[k][s] = tanh(mean_xyz F[16k:16k+16] @ W[k])[s]; W_robot is the robot's [4,16,S].
FIELDBRAIN_HOST_DEVICE float hierarchical_prediction(const float* row, const float* W_robot,
                                                     int64_t k, int64_t s, int64_t S) {
  float acc = 0.0f;
  for (int64_t j = 0; j < 16; ++j)
    acc = acc + row[kReadoutChannelMean + 16 * k + j] * W_robot[(16 * k + j) * S + s];
  return tanhf(acc);
}

// Robot b's prediction of sensor j and its confidence (docs/cycle.md step 9). cf: the four
// timescale confidences; hp: hpred[k][j]; a_j: this cycle's input; v2, v1: the recent inputs of
// ages 1 and 2 (read only when recent_count, after the push, reaches 2 or 3); act, tm: the
// active flag and temporal mean of the sensor's cell; content: mean|F[0:32]|.
FIELDBRAIN_HOST_DEVICE void predict_sensor(const float cf[kTimescales], const float hp[kTimescales],
                                           float a_j, float v2, float v1, int64_t recent_count,
                                           float act, float tm, float content, float& pred_j,
                                           float& pc_j) {
  const float a0 = cf[0], a1 = cf[1] * 0.5f, a2 = cf[2] * 0.25f, a3 = cf[3] * 0.125f;
  const float total = ((a0 + a1) + a2) + a3;
  const float num = ((a0 * hp[0] + a1 * hp[1]) + a2 * hp[2]) + a3 * hp[3];
  const float comb = total < 0.01f ? hp[0] : num / total;
  float p = comb * 0.4f;
  float top = cf[0];
  for (int k = 1; k < kTimescales; ++k) top = cf[k] > top ? cf[k] : top;
  float c = top * 0.3f;
  if (recent_count >= 2) {  // momentum of the last inputs (v3 = this cycle's)
    const float v3 = a_j;
    const float mom = recent_count >= 3 ? (v3 + (v3 - v2) * 0.5f) + (v2 - v1) * 0.3f
                                        : v3 + (v3 - v2);
    p = p + mom * 0.3f;
    c = c + 0.2f;
  }
  const float cell = act * 0.3f;
  p = p + cell * tm;
  c = cell > c ? cell : c;
  p = p + content * 0.1f;
  pred_j = at_least(at_most(p, 1.0f), -1.0f);
  c = at_least(at_most(c, 1.0f), 0.0f);
  pc_j = c < 0.01f ? 0.1f : c;
}

// ---- step 10 ----

// Motor i of robot b from its read-out row: the face gradients, the extra motors' noise
// (stream 3) and the exploration noise (stream 4), made here from the robot's (seed, cycle).
//
// The motors also carry the field's health to the host, in the copy the cycle makes anyway:
// mean |F| (accumulated in double over the whole field) is finite exactly when every value of
// F is, so a robot whose field stopped being finite gets NaN motors (docs/operating.md,
// "A brain that stops being finite"). x - x is 0 for finite x and NaN for NaN and +-Inf.
FIELDBRAIN_HOST_DEVICE float motor_command(const float* row, const int64_t* key, float explore,
                                           int64_t i, int64_t M) {
  const uint64_t seed = static_cast<uint64_t>(key[0]), cycle = static_cast<uint64_t>(key[1]);
  const float* summary = row + kReadoutSummary;
  const float health = summary[kSummaryAbsMean] - summary[kSummaryAbsMean];
  if (health != 0.0f) return health;
  float t = 0.0f;
  if (M >= 2 && i == 0) t = summary[kSummaryGradientX] * 5.0f;
  if (M >= 2 && i == 1) t = summary[kSummaryGradientY] * 5.0f;
  if (M >= 4 && i == 3) t = summary[kSummaryGradientZ] * 0.5f;
  if (M > 4 && i >= 4)
    t = philox::normal(seed, cycle, philox::kStreamExtraMotors, static_cast<uint64_t>(i - 4)) * 0.1f;
  const float eps = philox::normal(seed, cycle, philox::kStreamExploration, static_cast<uint64_t>(i));
  return tanhf(t + (eps * explore) * 0.3f);
}

// ---- step 11 ----

FIELDBRAIN_HOST_DEVICE float motor_abs_mean(const float* motor, int64_t M) {
  float sum = 0.0f;
  for (int64_t i = 0; i < M; ++i) sum += fabsf(motor[i]);
  return sum / static_cast<float>(M);
}
// Channel 62 at (y, z): decayed, plus the motors' direction along z and y (M >= 2).
FIELDBRAIN_HOST_DEVICE float echo_direction(float v, const float* motor, int64_t M, float lin_y,
                                            float lin_z) {
  const float decayed = v * 0.95f;
  if (M < 2) return decayed;
  return decayed + (motor[0] * lin_z + motor[1] * lin_y) * 0.3f;
}
// Channel 63: decayed, plus the motors' mean magnitude.
FIELDBRAIN_HOST_DEVICE float echo_magnitude(float v, float abs_mean) {
  return v * 0.95f + abs_mean * 0.2f;
}

}  // namespace prediction
}  // namespace ops
}  // namespace fieldbrain
