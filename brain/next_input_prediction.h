// Next-input prediction and its scoring (docs/cycle.md steps 1 and 9; legacy §3.3, §3.11,
// §4.3): the brain predicts its next sensor vector from the hierarchical readouts, the
// momentum of the recent inputs and the active pooled cells; when the input arrives the
// error updates the prediction confidence.
#pragma once

#include <torch/torch.h>

#include "brain/brain_module.h"
#include "brain/cycle_context.h"
#include "brain/hierarchical_predictor.h"
#include "brain/motor_echo.h"
#include "brain/motor_generation.h"
#include "brain/ring_buffer.h"
#include "brain/spatial_pooling.h"

namespace fieldbrain {

struct NextInputPredictionOptions {
  NextInputPredictionOptions(int64_t batch, int64_t sensory_dim)
      : batch_(batch), sensory_dim_(sensory_dim) {}
  TORCH_ARG(int64_t, batch);
  TORCH_ARG(int64_t, sensory_dim);
  TORCH_ARG(torch::Device, device) = torch::kCPU;
  // The fast path: score() runs the fused operator fieldbrain::prediction_score and
  // predict_and_act() is available (brain/ops/prediction.h).
  TORCH_ARG(bool, fused) = false;
};

class NextInputPredictionImpl : public BrainModule {
 public:
  explicit NextInputPredictionImpl(NextInputPredictionOptions options);
  void set_batch(int64_t batch) override { options.batch(batch); }

  // Step 1: scores the last prediction (scored robots), updates conf and last_err; returns
  // e = a - pred [B,S] (meaningful for scored robots only). Fused: one operator, and the
  // returned tensor is `last_err` itself (equal to e for the scored robots), so no tensor is made.
  torch::Tensor score(const CycleContext& ctx, const torch::Tensor& n_active);

  // Step 9 with the field after the field step.
  void predict(const CycleContext& ctx, const torch::Tensor& field,
               HierarchicalPredictorImpl& hierarchy, const SpatialPoolingImpl& pooling);

  // The fast path's steps 8-11 in one fused operator (fieldbrain::prediction_act) from the
  // read-out [B, kReadoutWidth] of the field after step 7 (brain/ops/field_readout.h): writes
  // pooling's active / n_active / temporal, hierarchy.hpred (reading its W and herr rings),
  // pred, pc, pushes the input into `recent`, writes motors.motor (its noise made in the
  // kernel from noise_key [B,2], the same numbers as the draws eps_m / eps_x) and the echo into
  // `field`. Needs options.fused(). Creates no tensor.
  void predict_and_act(const CycleContext& ctx, const torch::Tensor& readout,
                       HierarchicalPredictorImpl& hierarchy, SpatialPoolingImpl& pooling,
                       MotorGenerationImpl& motors, const MotorEchoImpl& echo,
                       const torch::Tensor& explore, const torch::Tensor& noise_key,
                       torch::Tensor& field);

  // predict_and_act in two halves for a graph-captured cycle (brain/cycle_graph.h): the
  // operator launch (device work only) and the recent ring's count update.
  void launch_predict_and_act(const CycleContext& ctx, const torch::Tensor& readout,
                              HierarchicalPredictorImpl& hierarchy, SpatialPoolingImpl& pooling,
                              MotorGenerationImpl& motors, const MotorEchoImpl& echo,
                              const torch::Tensor& explore, const torch::Tensor& noise_key,
                              torch::Tensor& field);
  void advance_host(const CycleContext& ctx) override;
  void write_facts(int64_t b, int64_t* facts) const override;  // recent's count

  NextInputPredictionOptions options;
  RingBuffer recent{nullptr};  // last 3 inputs
  torch::Tensor pred;          // [B,S] prediction of the next input
  torch::Tensor pc;            // [B,S] its per-sensor confidence (telemetry)
  torch::Tensor last_err;      // [B,S]
  torch::Tensor conf;          // [B]

 private:
  // Step 9 from the timescale confidences cf [B,4] (hierarchy.hpred already updated) and
  // mean|F[0:32]| [B].
  void predict_with(const CycleContext& ctx, const torch::Tensor& cf,
                    const torch::Tensor& content_abs_mean,
                    const HierarchicalPredictorImpl& hierarchy, const SpatialPoolingImpl& pooling);

  torch::Tensor cell_of_sensor_, channel_of_sensor_;  // [S] int64: j mod 64, j mod 16
};
TORCH_MODULE(NextInputPrediction);

}  // namespace fieldbrain
