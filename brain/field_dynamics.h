// The field step (docs/cycle.md step 7, items 1-8): decay, spontaneous activity, learned
// diffusion, coupling, dynamics self-modification, NaN repair/squash/clamp and the global
// periodic diffusion. The reference path uses plain ATen ops one-to-one with
// scripts/reference; the fused operator of brain/ops has the same contract.
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
  // A brain config's field_step (parse_field_step, read once by the constructor): "reference"
  // (field_step_reference), "fast" (the registered fieldbrain::field_step op), "script" (the
  // built-in TorchScript step) or the path of an exported TorchScript step.
  TORCH_ARG(std::string, field_step) = "reference";
  TORCH_ARG(torch::Device, device) = torch::kCPU;
  // The fused fast path (brain/FUSED.md): compute_wave runs fieldbrain::spontaneous_wave_out
  // into the wave buffer instead of its ATen expression. Set by FieldBrainImpl::build when
  // field_step = "fast".
  TORCH_ARG(bool, fused) = false;
};

// Holds the per-robot wave vectors of the spontaneous activity (docs/cycle.md construction draws
// 2-3) and runs the configured field step.
class FieldDynamicsImpl : public BrainModule {
 public:
  explicit FieldDynamicsImpl(FieldDynamicsOptions options);
  void set_batch(int64_t batch) override { options.batch(batch); }

  // Construction 2-3 for robot b from its Philox seed (docs/cycle.md "Randomness"): the
  // number of wave vectors, then the vectors.
  void init_robot(int64_t b, uint64_t seed);

  // wave [B,R,R,R] for phases phi [B] (= 0.1 * cycle), written into the wave buffer: with
  // fused() by the fieldbrain::spontaneous_wave_out operator (no tensor created), else by
  // ATen ops (the reference expression the operator is tested against).
  const torch::Tensor& compute_wave(const torch::Tensor& phi);

  // Runs the configured field step (contract of field_step_reference).
  torch::Tensor step(const torch::Tensor& field, const torch::Tensor& noise,
                     const torch::Tensor& wave, const torch::Tensor& ef,
                     const torch::Tensor& scalars);

  // The fast step with the noise made inside the operator from noise_key [B,2] int64
  // (seed, cycle) (fieldbrain::field_step_seeded_out into a buffer kept here: no allocation
  // in steady state). Only for field_step = "fast".
  const torch::Tensor& step_seeded(const torch::Tensor& field, const torch::Tensor& noise_key,
                                   const torch::Tensor& wave, const torch::Tensor& ef,
                                   const torch::Tensor& scalars);

  FieldDynamicsOptions options;
  torch::Tensor wave_vectors;  // [B,5,3], rows >= n_waves zero
  torch::Tensor wave_mask;     // [B,5] 0/1
  torch::Tensor wave;          // [B,R,R,R] scratch
  torch::Tensor coords;        // [3,R,R,R] integer coordinates x, y, z (float)
  // [B,64,R,R,R] output of step_seeded (fast path only). Per-robot scratch, not a buffer:
  // registered (brain/brain_module.h), so row views re-point it with the field.
  torch::Tensor next;

 private:
  FieldStepImpl step_impl_ = FieldStepImpl::Aten;  // options.field_step(), parsed
  std::shared_ptr<class ScriptedFieldStep> script_;  // for "script" and .pt paths
};
TORCH_MODULE(FieldDynamics);

}  // namespace fieldbrain
