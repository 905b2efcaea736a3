// The fused cycle's prediction (docs/cycle.md steps 1 and 8-11): the state of
// NextInputPrediction (brain/next_input_prediction.h), step 1 as fieldbrain::prediction_score
// and steps 8-11 as fieldbrain::prediction_act (brain/ops/prediction.h), which create no
// tensor.
#pragma once

#include "brain/hierarchical_predictor.h"
#include "brain/motor_echo.h"
#include "brain/motor_generation.h"
#include "brain/next_input_prediction.h"
#include "brain/spatial_pooling.h"

namespace fieldbrain {

class FusedNextInputPredictionImpl : public NextInputPredictionState {
 public:
  explicit FusedNextInputPredictionImpl(NextInputPredictionOptions options);

  // Step 1 for the scored robots (decided in the kernel from ctx.facts): updates conf and
  // last_err and returns `last_err` itself (equal to e = a - pred for the scored robots), so no
  // tensor is made.
  torch::Tensor score(const CycleContext& ctx, const torch::Tensor& n_active);

  // Steps 8-11 in one operator from the read-out [B, kReadoutWidth] of the field after step 7
  // (brain/ops/field_readout.h): writes pooling's active / n_active / temporal, hierarchy.hpred
  // (reading its W and herr rings), pred, pc, pushes the input into `recent`, writes
  // motors.motor (its noise made in the kernel from noise_key [B,2], the same numbers as the
  // draws eps_m / eps_x) and the echo into `field`. launch_predict_and_act, then advance_host.
  void predict_and_act(const CycleContext& ctx, const torch::Tensor& readout,
                       HierarchicalPredictorState& hierarchy, SpatialPoolingImpl& pooling,
                       MotorGenerationImpl& motors, const MotorEchoImpl& echo,
                       const torch::Tensor& explore, const torch::Tensor& noise_key,
                       torch::Tensor& field);
  // The operator launch alone (device work only, for a graph-captured cycle,
  // brain/cycle_graph.h); advance_host then advances the recent ring's count.
  void launch_predict_and_act(const CycleContext& ctx, const torch::Tensor& readout,
                              HierarchicalPredictorState& hierarchy, SpatialPoolingImpl& pooling,
                              MotorGenerationImpl& motors, const MotorEchoImpl& echo,
                              const torch::Tensor& explore, const torch::Tensor& noise_key,
                              torch::Tensor& field);
  void advance_host(const CycleContext& ctx) override;
};
TORCH_MODULE(FusedNextInputPrediction);

}  // namespace fieldbrain
