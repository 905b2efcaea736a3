// The field step (docs/cycle.md step 7, items 1-8): decay, spontaneous activity, learned
// diffusion, coupling, dynamics self-modification, NaN repair/squash/clamp and the global
// periodic diffusion. The reference cycle's FieldDynamics runs the configured step (plain ATen
// ops one-to-one with scripts/reference, or TorchScript); the fused cycle's FusedFieldDynamics
// (brain/field_dynamics_fused.h) runs the fused operator of brain/ops, which has the same
// contract. Both keep one state, FieldDynamicsState.
#pragma once

#include <memory>
#include <string>

#include <torch/torch.h>

#include "brain/brain_config.h"
#include "brain/brain_module.h"

namespace fieldbrain {

// field   [B,64,R,R,R] float32   the field after the imprint (not modified)
// noise   [B,48,R,R,R] float32   eps_sp, standard normal (docs/cycle.md "Randomness", stream 2)
// wave    [B,R,R,R]    float32   sum over valid wave vectors of sin(phi + (wv.(x,y,z))/3)
// ef      [B,R,R,R]    float32   the error field Ef (ignored where has_ef = 0)
// scalars [B,8]        float32   per robot: 0 decay (the modulation's decay_rate, before x0.999),
//                                1 drive, 2 explore, 3 sigma, 4 has_ef (0/1), 5..7 reserved (0)
// returns [B,64,R,R,R]           the field after step 7.8 (global periodic diffusion),
//                                before attractors and the hierarchical update
// Allocates its temporaries; all tensors on one device.
torch::Tensor field_step_reference(const torch::Tensor& field, const torch::Tensor& noise,
                                   const torch::Tensor& wave, const torch::Tensor& ef,
                                   const torch::Tensor& scalars);

// Column indices of `scalars`.
enum FieldStepScalar : int64_t {
  kStepDecay = 0,
  kStepDrive = 1,
  kStepExplore = 2,
  kStepSigma = 3,
  kStepHasEf = 4,
  kStepScalarCount = 8,
};

struct FieldDynamicsOptions {
  FieldDynamicsOptions(int64_t batch, int64_t resolution) : batch_(batch), resolution_(resolution) {}
  TORCH_ARG(int64_t, batch);
  TORCH_ARG(int64_t, resolution);
  // The reference module's field step, as the config read it once (BrainConfig::field_step_impl()):
  // Aten (field_step_reference), Script (the built-in TorchScript step), ScriptFile (the
  // exported TorchScript step at script_path) or Fused (the registered fieldbrain::field_step
  // op on the given noise). FusedFieldDynamics reads neither: it runs field_step_seeded_out.
  TORCH_ARG(FieldStepImpl, field_step) = FieldStepImpl::Aten;
  TORCH_ARG(std::string, script_path) = "";
  TORCH_ARG(torch::Device, device) = torch::kCPU;
};

// The state both variants keep (the save format's buffers, under these names): the per-robot
// wave vectors of the spontaneous activity (docs/cycle.md construction draws 2-3) and the wave.
class FieldDynamicsState : public BrainModule {
 public:
  void set_batch(int64_t batch) override { options.batch(batch); }

  // Construction 2-3 for robot b from its Philox seed (docs/cycle.md "Randomness"): the
  // number of wave vectors, then the vectors.
  void init_robot(int64_t b, uint64_t seed);

  FieldDynamicsOptions options;
  torch::Tensor wave_vectors;  // [B,5,3], rows >= n_waves zero
  torch::Tensor wave_mask;     // [B,5] 0/1
  torch::Tensor wave;          // [B,R,R,R] scratch

 protected:
  explicit FieldDynamicsState(FieldDynamicsOptions options);
};

// The reference cycle's field step: the configured implementation on given noise.
class FieldDynamicsImpl : public FieldDynamicsState {
 public:
  explicit FieldDynamicsImpl(FieldDynamicsOptions options);

  // wave [B,R,R,R] for phases phi [B] (= 0.1 * cycle), written into the wave buffer by ATen
  // ops (the reference expression the fused operator is tested against).
  const torch::Tensor& compute_wave(const torch::Tensor& phi);

  // Runs the configured field step (contract of field_step_reference).
  torch::Tensor step(const torch::Tensor& field, const torch::Tensor& noise,
                     const torch::Tensor& wave, const torch::Tensor& ef,
                     const torch::Tensor& scalars);

  torch::Tensor coords;  // [3,R,R,R] integer coordinates x, y, z (float)

 private:
  std::shared_ptr<class ScriptedFieldStep> script_;  // for Script and ScriptFile
};
TORCH_MODULE(FieldDynamics);

}  // namespace fieldbrain
