// Emergent sensory mapping and the imprint of the input into the field (docs/cycle.md step 4;
// legacy §3.4, §4.1). Three location strategies (a remembered location of a similar
// pattern, the resonant projection, an empty place) are all computed on the device and chosen
// with `where`; a 5x5x5 blob of the imprint strength is then added to all 64 channels. With
// `fused`, the fast path, the same step runs as one operator (brain/ops/sensory_imprint.h)
// that creates no tensor; the ATen code stays the reference it is tested against.
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
  TORCH_ARG(bool, fused) = false;  // step 4 as fieldbrain::sensory_imprint_ (fast path)
};

// What the imprint strength is made of (all [B] on the device).
struct ImprintDrive {
  torch::Tensor conf, has_ef, boost, prev_imp, prev_amp;
};

class SensoryImprintImpl : public BrainModule {
 public:
  explicit SensoryImprintImpl(SensoryImprintOptions options);
  void set_batch(int64_t batch) override { options.batch(batch); }

  // Step 4: adds the blob to `field` in place for robots that are not skipped. Its noise eps_loc
  // [B,R,R,R] is draw 1 of the cycle: the ATen form reads it from `eps_loc`, the fused form
  // draws it itself from `noise_key` [B,2] (seed, cycle), so the fast path passes no eps_loc.
  // Returns the imprint strength s [B] (0 where skipped): with `fused`, the module's own [B]
  // buffer, rewritten every cycle (no tensor is created).
  torch::Tensor apply(const CycleContext& ctx, torch::Tensor& field, const ImprintDrive& drive,
                      const torch::Tensor& eps_loc, const torch::Tensor& noise_key);
  // The ATen form of step 4 (the reference and script paths; the fused operator's reference).
  torch::Tensor apply_aten(const CycleContext& ctx, torch::Tensor& field, const ImprintDrive& drive,
                           const torch::Tensor& eps_loc);
  // The fused form: one operator call, decisions per robot from ctx.facts, then the host
  // advances the map ring for the robots with input.
  torch::Tensor apply_fused(const CycleContext& ctx, torch::Tensor& field, const ImprintDrive& drive,
                            const torch::Tensor& noise_key);
  // apply_fused in two halves for a graph-captured cycle (brain/cycle_graph.h): the operator
  // launch (device work only; returns the strength buffer) and the map ring's count update.
  torch::Tensor launch_fused(const CycleContext& ctx, torch::Tensor& field, const ImprintDrive& drive,
                             const torch::Tensor& noise_key);
  void advance_host(const CycleContext& ctx) override;
  void write_facts(int64_t b, int64_t* facts) const override;  // map's count

  // The resonant projection P @ p for unit patterns p [B,S] -> [B,R^3] (x-major).
  torch::Tensor project(const torch::Tensor& p) const;

  SensoryImprintOptions options;
  RingBuffer map{nullptr};  // mapping memory, 100 x [S] unit patterns
  torch::Tensor map_loc;    // [B,100,3] int64: where each remembered pattern was imprinted
  torch::Tensor occ;        // [B,R,R,R] 0/1 locations taken by the empty strategy

 private:
  // The sparse form of P [R^3,S]: entry e adds proj_weight[e] * p[proj_sensor[e]] to voxel
  // proj_voxel[e]. Entries are unique (voxel, sensor) pairs: weights of clamped offsets that
  // land on the same voxel are summed at construction, as in the dense matrix.
  torch::Tensor proj_voxel_, proj_sensor_, proj_weight_;
  torch::Tensor blob_offsets_;  // [125,3] int64: (dx, dy, dz), each in -2..2
  torch::Tensor blob_weight_;   // [125]: 0.8^(|dx|+|dy|+|dz|)

  // Fused path only: the operator's static tables (ops::make_imprint_tables), its per-robot
  // scratch and the strength it writes.
  std::vector<torch::Tensor> tables_;
  torch::Tensor strength_;      // [B] float
  torch::Tensor work_;          // [B, ImprintScratchLayout::floats()] float, zero at creation
  torch::Tensor plane_argmax_;  // [B,R] int32
};
TORCH_MODULE(SensoryImprint);

}  // namespace fieldbrain
