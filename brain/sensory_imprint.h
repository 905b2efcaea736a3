// Emergent sensory mapping and the imprint of the input into the field (docs/cycle.md step 4;
// legacy §3.4, §4.1). Three location strategies (a remembered location of a similar
// pattern, the resonant projection, an empty place) are all computed on the device and chosen
// with `where`; a 5x5x5 blob of the imprint strength is then added to all 64 channels.
// Two types over one state (SensoryImprintState): SensoryImprint, the ATen method of the
// reference cycle (the reference the operator is tested against), and FusedSensoryImprint
// (brain/sensory_imprint_fused.h), the fused cycle's one operator, which creates no tensor.
#pragma once

#include <torch/torch.h>

#include "brain/brain_module.h"
#include "brain/cycle_context.h"
#include "brain/ring_buffer.h"

namespace fieldbrain {

struct SensoryImprintOptions {
  SensoryImprintOptions(int64_t batch, int64_t sensory_dim, int64_t resolution)
      : batch_(batch), sensory_dim_(sensory_dim), resolution_(resolution) {}
  TORCH_ARG(int64_t, batch);
  TORCH_ARG(int64_t, sensory_dim);
  TORCH_ARG(int64_t, resolution);
  TORCH_ARG(torch::Device, device) = torch::kCPU;
};

// What the imprint strength is made of (all [B] on the device).
struct ImprintDrive {
  torch::Tensor conf, has_ef, boost, prev_imp, prev_amp;
};

// The state both variants keep (the save format's buffers, under these names).
class SensoryImprintState : public BrainModule {
 public:
  void set_batch(int64_t batch) override { options.batch(batch); }
  void write_facts(int64_t b, int64_t* facts) const override;  // map's count

  SensoryImprintOptions options;
  RingBuffer map{nullptr};  // mapping memory, 100 x [S] unit patterns
  torch::Tensor map_loc;    // [B,100,3] int64: where each remembered pattern was imprinted
  torch::Tensor occ;        // [B,R,R,R] 0/1 locations taken by the empty strategy

 protected:
  explicit SensoryImprintState(SensoryImprintOptions options);
};

// The reference cycle's step 4 (ATen ops).
class SensoryImprintImpl : public SensoryImprintState {
 public:
  explicit SensoryImprintImpl(SensoryImprintOptions options);

  // Step 4: adds the blob to `field` in place for robots that are not skipped, the empty
  // location's noise read from eps_loc [B,R,R,R] (draw 1 of the cycle). Returns the imprint
  // strength s [B] (0 where skipped).
  torch::Tensor apply(const CycleContext& ctx, torch::Tensor& field, const ImprintDrive& drive,
                      const torch::Tensor& eps_loc);

  // The resonant projection P @ p for unit patterns p [B,S] -> [B,R^3] (x-major).
  torch::Tensor project(const torch::Tensor& p) const;

 private:
  // The sparse form of P [R^3,S]: entry e adds proj_weight[e] * p[proj_sensor[e]] to voxel
  // proj_voxel[e]. Entries are unique (voxel, sensor) pairs: weights of clamped offsets that
  // land on the same voxel are summed at construction, as in the dense matrix.
  torch::Tensor proj_voxel_, proj_sensor_, proj_weight_;
  torch::Tensor blob_offsets_;  // [125,3] int64: (dx, dy, dz), each in -2..2
  torch::Tensor blob_weight_;   // [125]: 0.8^(|dx|+|dy|+|dz|)
};
TORCH_MODULE(SensoryImprint);

}  // namespace fieldbrain
