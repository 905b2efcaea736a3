// The private parts of FieldBrainImpl, shared by the files that implement it: the cycle
// (field_brain.cpp), its archive (field_brain_archive.cpp) and its telemetry
// (field_brain_telemetry.cpp). Not part of the public interface.
#pragma once

#include <torch/torch.h>

#include "brain/cycle_facts.h"
#include "brain/field_brain.h"
#include "brain/field_dynamics.h"
#include "brain/hierarchical_predictor.h"
#include "brain/motor_echo.h"
#include "brain/motor_generation.h"
#include "brain/next_input_prediction.h"
#include "brain/novelty_modulation.h"
#include "brain/prediction_error_field.h"
#include "brain/reward_attractors.h"
#include "brain/sensory_imprint.h"
#include "brain/spatial_pooling.h"

namespace fieldbrain {

// Telemetry columns kept on the device each cycle (docs/cycle.md "Telemetry").
enum TelemetryColumn : int64_t {
  kTeleConfidence,
  kTeleNovelty,
  kTeleExplore,
  kTeleDrive,
  kTeleImprint,
  kTeleDecay,
  kTeleSmoothedInfo,
  kTeleSmoothedConf,
  kTeleSigma,
  kTeleActiveCells,
  kTeleImprintApplied,
  kTeleColumns = 16,
};

struct FieldBrainImpl::Parts {
  HierarchicalPredictor hierarchy{nullptr};
  PredictionErrorField error_field{nullptr};
  SensoryImprint imprint{nullptr};
  NoveltyModulation modulation{nullptr};
  RewardAttractors attractors{nullptr};
  FieldDynamics dynamics{nullptr};
  SpatialPooling pooling{nullptr};
  NextInputPrediction prediction{nullptr};
  MotorGeneration motors{nullptr};
  MotorEcho echo{nullptr};
  // Per-robot scratch of the cycles (registered with FieldBrainImpl::register_scratch, so row
  // views follow it), each allocated only by the cycle that uses it:
  // the reference cycle's draws (docs/cycle.md per-cycle draws 1-4), rewritten every cycle;
  torch::Tensor eps_loc, eps_sp, eps_m, eps_x;
  // the fused cycle's read-out of the field [B, kReadoutWidth] (brain/ops/field_readout.h),
  // rewritten twice a cycle: after the imprint (step 5's statistics) and after step 7 (8-10's).
  torch::Tensor readout;
  // The cycle's host-known facts and inputs, static tables rewritten every cycle.
  CycleFacts facts;
};

}  // namespace fieldbrain
