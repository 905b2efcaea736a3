// The reference cycle (BrainCycle::Reference: field_step "reference", "script" or a .pt path):
// docs/cycle.md steps 1-11 as ATen ops, one-to-one with scripts/reference/fieldbrain_ref.py
// (brain/cycle_reference.cpp). The fused cycle (brain/cycle_fused.h) is tested against it.
#pragma once

#include "brain/cycle.h"
#include "brain/field_dynamics.h"
#include "brain/hierarchical_predictor.h"
#include "brain/next_input_prediction.h"
#include "brain/novelty_modulation.h"
#include "brain/prediction_error_field.h"
#include "brain/sensory_imprint.h"

namespace fieldbrain {

class ReferenceCycle : public Cycle {
 public:
  // Builds the ATen modules into the brain's parts and the draws' buffers.
  explicit ReferenceCycle(FieldBrainImpl& brain);
  void run(const CycleContext& ctx) override;

 private:
  HierarchicalPredictor hierarchy_{nullptr};
  PredictionErrorField error_field_{nullptr};
  SensoryImprint imprint_{nullptr};
  NoveltyModulation modulation_{nullptr};
  FieldDynamics dynamics_{nullptr};  // the field step the config chose (FieldStepImpl)
  NextInputPrediction prediction_{nullptr};
  // The cycle's draws (docs/cycle.md per-cycle draws 1-4), rewritten every cycle: per-robot
  // scratch, registered with the brain.
  torch::Tensor eps_loc_, eps_sp_, eps_m_, eps_x_;
};

}  // namespace fieldbrain
