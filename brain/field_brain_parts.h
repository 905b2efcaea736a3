// The private parts of FieldBrainImpl, shared by the files that implement it: the brain
// (field_brain.cpp), its two cycles (brain/cycle.h), its archive (field_brain_archive.cpp) and
// its telemetry (field_brain_telemetry.cpp). Not part of the public interface.
#pragma once

#include <memory>

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

// The brain's modules, registered in this order under these names (the save format's).
struct BrainParts {
  // The six a cycle has its own variants of (brain/cycle.h builds them), as the state both
  // variants keep: what the brain and the other cycle-independent code read.
  std::shared_ptr<HierarchicalPredictorState> hierarchy;
  std::shared_ptr<PredictionErrorFieldState> error_field;
  std::shared_ptr<SensoryImprintState> imprint;
  std::shared_ptr<NoveltyModulationState> modulation;
  RewardAttractors attractors{nullptr};
  std::shared_ptr<FieldDynamicsState> dynamics;
  SpatialPooling pooling{nullptr};
  std::shared_ptr<NextInputPredictionState> prediction;
  MotorGeneration motors{nullptr};
  MotorEcho echo{nullptr};
  // The cycle's host-known facts and inputs, static tables rewritten every cycle.
  CycleFacts facts;
};

}  // namespace fieldbrain
