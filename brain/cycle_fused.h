// The fused cycle (BrainCycle::Fused: field_step "fast"): docs/cycle.md steps 1-11 through the
// fused operators of brain/FUSED.md (brain/cycle_fused.cpp), the same numbers as the reference
// cycle (brain/cycle_reference.h) within 1e-4, no tensor created in steady state.
#pragma once

#include <cstdint>
#include <vector>

#include "brain/cycle.h"
#include "brain/cycle_graph.h"
#include "brain/field_dynamics_fused.h"
#include "brain/hierarchical_predictor_fused.h"
#include "brain/next_input_prediction_fused.h"
#include "brain/novelty_modulation_fused.h"
#include "brain/prediction_error_field_fused.h"
#include "brain/sensory_imprint_fused.h"

namespace fieldbrain {

class FusedCycle : public Cycle {
 public:
  // Builds the fused modules into the brain's parts and the read-out's scratch. Throws
  // std::invalid_argument when the fused operators are not registered.
  explicit FusedCycle(FieldBrainImpl& brain);
  void run(const CycleContext& ctx) override;
  int64_t graph_replays() const override { return graph_.replays(); }

 private:
  // Rebuilds the shadow of each robot in the view whose bank rows may have changed outside the
  // pull since that robot's shadow was last made.
  void refresh_attractor_shadow();
  // The launches alone, host-free: what graph_ records once on CUDA and replays.
  void device_cycle(const CycleContext& ctx);

  FusedHierarchicalPredictor hierarchy_{nullptr};
  FusedPredictionErrorField error_field_{nullptr};
  FusedSensoryImprint imprint_{nullptr};
  FusedNoveltyModulation modulation_{nullptr};
  FusedFieldDynamics dynamics_{nullptr};
  FusedNextInputPrediction prediction_{nullptr};
  // The read-out of the field [B, kReadoutWidth] (brain/ops/field_readout.h), rewritten twice
  // a cycle: after the imprint (step 5's statistics) and after step 7 (8-10's). Per-robot
  // scratch, registered with the brain.
  torch::Tensor readout_;
  // The attractor bank's 16-bit shadow: levels [B,A,64,R,R,R] int16 and each channel's step
  // [B,A,64] float (brain/ops/attractor_pull.h): what the pull reads, half the bank's bytes.
  // Derived state, not saved: rebuilt from the bank's live slots whenever the bank was written
  // by anything but the pull (a load, a row move, a test), which the bank's version counter
  // tells (bank_version_, -1: never built). The counter is the whole storage's, the view's
  // rows are not: a brain group views other rows between cycles (a tick of other robots, a
  // telemetry read-out, a save) without writing, so freshness is kept per storage row.
  // shadow_fresh_[row]: that row's shadow matches its bank (made or stored by a cycle since the
  // last outside write). An outside write, to whichever row, makes every row stale; a stale row
  // is rebuilt when a cycle next views it. Rebuilding on every change of view cost a two-robot
  // server 16-30% of its worker (docs/cycle.md).
  torch::Tensor attractor_shadow_;
  torch::Tensor attractor_shadow_scale_;
  int64_t bank_version_ = -1;
  const void* bank_storage_ = nullptr;
  std::vector<uint8_t> shadow_fresh_;
  CycleGraph graph_;
};

}  // namespace fieldbrain
