// CPU kernels of fieldbrain::prediction_score and prediction_act (brain/ops/prediction.h):
// at::parallel_for over robots around the per-robot arithmetic of prediction_math.h, and for
// the motor echo a second pass over (robot, x-plane) so that one robot's echo uses every thread.
// No tensor, no heap allocation.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "brain/ops/cpu/kernels.h"

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace {

namespace pm = prediction;

// Steps 8-10 and the ring push for robot b (everything but the field-sized echo).
void act_robot(const pm::ActArgs& a, int64_t b) {
  const int64_t S = a.S, M = a.M;
  const float* row = a.readout + b * kReadoutWidth;
  const int64_t* facts = a.facts + b * a.facts_stride;

  // 8. Spatial pooling.
  const float threshold = pm::pooling_threshold(row);
  float* active = a.active + b * kReadoutCells;
  float count = 0.0f;
  for (int64_t cell = 0; cell < kReadoutCells; ++cell) {
    active[cell] = pm::cell_active(row, cell, threshold);
    count += active[cell];
  }
  a.n_active[b] = count;
  float* temporal = a.temporal + b * 16 * kReadoutCells;
  for (int64_t c = 0; c < 16; ++c) {
    for (int64_t cell = 0; cell < kReadoutCells; ++cell)
      temporal[c * kReadoutCells + cell] = pm::cell_temporal(row, c, cell);
  }

  // 9. Next-input prediction, after pushing this cycle's input into `recent`.
  float cf[pm::kTimescales];
  for (int k = 0; k < pm::kTimescales; ++k)
    cf[k] = pm::timescale_confidence(a.herr[k] + b * pm::kHerrCapacity,
                                     pm::herr_count_after(facts, k));
  const int64_t before = facts[kFactRecentCount];
  const int64_t after = before + 1;
  float* recent = a.recent + b * pm::kRecentCapacity * S;
  const float* age1 = recent + ((after + 1) % pm::kRecentCapacity) * S;  // slot (after-2) mod 3
  const float* age2 = recent + ((after + 0) % pm::kRecentCapacity) * S;  // slot (after-3) mod 3
  float* newest = recent + (before % pm::kRecentCapacity) * S;
  const float* sensors = a.sensors + b * S;
  const float* W = a.W + b * 4 * 16 * S;
  float* hpred = a.hpred + b * 4 * S;
  const float content = row[kReadoutSummary + kSummaryContentAbsMean];
  for (int64_t j = 0; j < S; ++j) {
    float hp[pm::kTimescales];
    for (int k = 0; k < pm::kTimescales; ++k) {
      hp[k] = pm::hierarchical_prediction(row, W, k, j, S);
      hpred[k * S + j] = hp[k];
    }
    const int64_t cell = j % kReadoutCells;
    pm::predict_sensor(cf, hp, sensors[j], age1[j], age2[j], after, active[cell],
                       temporal[(j % 16) * kReadoutCells + cell], content, a.pred[b * S + j],
                       a.pc[b * S + j]);
  }
  for (int64_t j = 0; j < S; ++j) newest[j] = sensors[j];  // after the reads of ages 1, 2

  // 10. Motors.
  for (int64_t i = 0; i < M; ++i)
    a.motor[b * M + i] = pm::motor_command(row, a.noise_key + 2 * b, a.explore[b], i, M);
}

// 11. The echo on one x-plane of channels 62 and 63 of robot b.
void echo_plane(const pm::ActArgs& a, int64_t b, int64_t x) {
  const int64_t R = a.R, M = a.M, plane = R * R, V = plane * R;
  const float* motor = a.motor + b * M;
  const float magnitude = pm::motor_abs_mean(motor, M);
  float* c62 = a.field + (b * 64 + 62) * V + x * plane;
  float* c63 = a.field + (b * 64 + 63) * V + x * plane;
  for (int64_t y = 0; y < R; ++y) {
    for (int64_t z = 0; z < R; ++z) {
      c62[y * R + z] = pm::echo_direction(c62[y * R + z], motor, M, a.lin[y], a.lin[z]);
      c63[y * R + z] = pm::echo_magnitude(c63[y * R + z], magnitude);
    }
  }
}

}  // namespace

void run(const prediction::ScoreArgs& a) {
  at::parallel_for(0, a.batch, 16, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) prediction::score_robot(a, b);
  });
}

void run(const prediction::ActArgs& a) {
  const int64_t B = a.batch;
  at::parallel_for(0, B, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) act_robot(a, b);
  });
  at::parallel_for(0, B * a.R, 4, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) echo_plane(a, t / a.R, t % a.R);
  });
}

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
