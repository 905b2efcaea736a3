// A FieldBrain's cycle (docs/cycle.md steps 1-11): one type per cycle, chosen once from the
// config (BrainConfig::cycle()) by make_cycle when the brain is built. Each owns what differs
// between the two: its variants of the six modules that have a fused form (built here, then
// registered by the brain under the save format's names) and its scratch.
//  - ReferenceCycle (brain/cycle_reference.h): the ATen modules, one-to-one with
//    scripts/reference, the cycle's draws made into buffers up front;
//  - FusedCycle (brain/cycle_fused.h): the fused modules (brain/FUSED.md), each random number
//    made inside the operator that consumes it, the device part host-free (a CUDA graph).
// Both read and write the brain's state (field, noise key, telemetry, the shared modules and
// the fact tables) through this base, and end the same way (finish).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/torch.h>

#include "brain/brain_config.h"
#include "brain/field_brain_parts.h"

namespace fieldbrain {

class BrainModule;
class FieldBrainImpl;
class StageTimer;
struct CycleContext;

class Cycle {
 public:
  virtual ~Cycle() = default;
  Cycle(const Cycle&) = delete;
  Cycle& operator=(const Cycle&) = delete;

  // Steps 1-11 for the brain's robots: ctx holds the host-known facts, the fact tables are
  // filled (not uploaded); the motors end in the brain's MotorGeneration.
  virtual void run(const CycleContext& ctx) = 0;
  // CUDA graph replays so far (brain/cycle_graph.h): 0 but for the fused cycle on CUDA.
  virtual int64_t graph_replays() const { return 0; }

 protected:
  explicit Cycle(FieldBrainImpl& brain) : brain_(brain) {}

  // The brain's state, shared by both cycles.
  BrainParts& parts() const;
  torch::Tensor& field() const;             // [B,64,R,R,R]
  const torch::Tensor& noise_key() const;  // [B,2] (Philox seed, cycle) per robot
  StageTimer& stages() const;
  const std::vector<BrainModule*>& modules() const;  // every module, for host work
  const BrainConfig& config() const;
  torch::Device device() const;
  int64_t batch() const;
  // Per-robot scratch of the cycle, registered with the brain so that row views follow it.
  torch::Tensor register_scratch(torch::Tensor t) const;
  // The end of both cycles' device part: the next cycle's noise key, this one's telemetry.
  void finish(const torch::Tensor& imprinted) const;
  // Hands a cycle's six module variants to the brain as the state the rest of it reads.
  template <class H, class E, class I, class N, class D, class P>
  void publish_variants(const H& hierarchy, const E& error_field, const I& imprint,
                        const N& modulation, const D& dynamics, const P& prediction) const {
    BrainParts& p = parts();
    p.hierarchy = hierarchy.ptr();
    p.error_field = error_field.ptr();
    p.imprint = imprint.ptr();
    p.modulation = modulation.ptr();
    p.dynamics = dynamics.ptr();
    p.prediction = prediction.ptr();
  }

 private:
  FieldBrainImpl& brain_;
};

// The cycle `which` (Reference or Fused) of `brain`: builds its module variants into the brain's
// parts (BrainParts) and its scratch. Throws std::invalid_argument for the legacy profile,
// whose cycle is brain/legacy's.
std::unique_ptr<Cycle> make_cycle(BrainCycle which, FieldBrainImpl& brain);

}  // namespace fieldbrain
