// Next-input prediction and its scoring (docs/cycle.md steps 1 and 9; legacy §3.3, §3.11,
// §4.3): the brain predicts its next sensor vector from the hierarchical readouts, the
// momentum of the recent inputs and the active pooled cells; when the input arrives the
// error updates the prediction confidence. Two types over one state (NextInputPredictionState):
// NextInputPrediction, the ATen methods of the reference cycle, and FusedNextInputPrediction
// (brain/next_input_prediction_fused.h), the fused cycle's operators.
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
};

// The state both variants keep (the save format's buffers, under these names).
class NextInputPredictionState : public BrainModule {
 public:
  void set_batch(int64_t batch) override { options.batch(batch); }
  void write_facts(int64_t b, int64_t* facts) const override;  // recent's count

  NextInputPredictionOptions options;
  RingBuffer recent{nullptr};  // last 3 inputs
  torch::Tensor pred;          // [B,S] prediction of the next input
  torch::Tensor pc;            // [B,S] its per-sensor confidence (telemetry)
  torch::Tensor last_err;      // [B,S]
  torch::Tensor conf;          // [B]

 protected:
  explicit NextInputPredictionState(NextInputPredictionOptions options);
};

// The reference cycle's steps 1 and 9 (ATen ops).
class NextInputPredictionImpl : public NextInputPredictionState {
 public:
  explicit NextInputPredictionImpl(NextInputPredictionOptions options);

  // Step 1: scores the last prediction (scored robots), updates conf and last_err; returns
  // e = a - pred [B,S] (meaningful for scored robots only).
  torch::Tensor score(const CycleContext& ctx, const torch::Tensor& n_active);

  // Step 9 with the field after the field step.
  void predict(const CycleContext& ctx, const torch::Tensor& field,
               HierarchicalPredictorState& hierarchy, const SpatialPoolingImpl& pooling);

 private:
  // Step 9 from the timescale confidences cf [B,4] (hierarchy.hpred already updated) and
  // mean|F[0:32]| [B].
  void predict_with(const CycleContext& ctx, const torch::Tensor& cf,
                    const torch::Tensor& content_abs_mean,
                    const HierarchicalPredictorState& hierarchy, const SpatialPoolingImpl& pooling);

  torch::Tensor cell_of_sensor_, channel_of_sensor_;  // [S] int64: j mod 64, j mod 16
};
TORCH_MODULE(NextInputPrediction);

}  // namespace fieldbrain
