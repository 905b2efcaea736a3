#include "brain/next_input_prediction_fused.h"

#include "brain/ops/prediction.h"

namespace fieldbrain {

FusedNextInputPredictionImpl::FusedNextInputPredictionImpl(NextInputPredictionOptions options_)
    : NextInputPredictionState(std::move(options_)) {}

torch::Tensor FusedNextInputPredictionImpl::score(const CycleContext& ctx, const torch::Tensor& n_active) {
  ops::prediction_score(ctx.sensors, ctx.facts, n_active, pred, conf, last_err);
  return last_err;
}

void FusedNextInputPredictionImpl::predict_and_act(
    const CycleContext& ctx, const torch::Tensor& readout, HierarchicalPredictorState& hierarchy,
    SpatialPoolingImpl& pooling, MotorGenerationImpl& motors, const MotorEchoImpl& echo,
    const torch::Tensor& explore, const torch::Tensor& noise_key, torch::Tensor& field) {
  launch_predict_and_act(ctx, readout, hierarchy, pooling, motors, echo, explore, noise_key, field);
  advance_host(ctx);
}

void FusedNextInputPredictionImpl::advance_host(const CycleContext&) {
  recent->advance();  // the kernel wrote slot count mod 3 for every robot (FUSED.md rule 4)
}

void FusedNextInputPredictionImpl::launch_predict_and_act(
    const CycleContext& ctx, const torch::Tensor& readout, HierarchicalPredictorState& hierarchy,
    SpatialPoolingImpl& pooling, MotorGenerationImpl& motors, const MotorEchoImpl& echo,
    const torch::Tensor& explore, const torch::Tensor& noise_key, torch::Tensor& field) {
  ops::prediction_act(readout, ctx.facts, noise_key, ctx.sensors, hierarchy.W,
                      hierarchy.herr[0]->data, hierarchy.herr[1]->data, hierarchy.herr[2]->data,
                      hierarchy.herr[3]->data, explore, echo.lin(), recent->data, pooling.active,
                      pooling.n_active, pooling.temporal, hierarchy.hpred, pred, pc, motors.motor,
                      field);
}

}  // namespace fieldbrain
