// Hierarchical prediction (docs/cycle.md steps 2 and 9 first half; legacy §4.2): four
// timescales (immediate, last 10, last 100, all history) each with a linear readout W[k]
// [16,S] from the mean of its 16 field channels, learned from its own error, and the pending
// field update U_h that writes each timescale's target pattern around the enc2field sites.
#pragma once

#include <array>
#include <vector>

#include <torch/torch.h>

#include "brain/brain_module.h"
#include "brain/cycle_context.h"
#include "brain/ring_buffer.h"

namespace fieldbrain {

struct HierarchicalPredictorOptions {
  HierarchicalPredictorOptions(int64_t batch, int64_t sensory_dim, int64_t resolution)
      : batch_(batch), sensory_dim_(sensory_dim), resolution_(resolution) {}
  TORCH_ARG(int64_t, batch);
  TORCH_ARG(int64_t, sensory_dim);
  TORCH_ARG(int64_t, resolution);
  TORCH_ARG(torch::Device, device) = torch::kCPU;
  // The fast path (brain/FUSED.md): steps 2 and 7.10 as fieldbrain::hierarchy_observe_ and
  // hierarchy_apply_ (brain/ops/hierarchy_learn.h), which create no tensor.
  TORCH_ARG(bool, fused) = false;
};

class HierarchicalPredictorImpl : public BrainModule {
 public:
  explicit HierarchicalPredictorImpl(HierarchicalPredictorOptions options);
  void set_batch(int64_t batch) override { options.batch(batch); }

  // Construction 5 for robot b: W[b,k,j,s] = (2u - 1) beta_k with u element (k*16 + j)*S + s
  // of the robot's hierarchy uniform stream (docs/cycle.md "Randomness").
  void init_robot(int64_t b, uint64_t seed);

  // Step 2 with the field at cycle start. Always pushes the input to the history; for scored
  // robots computes the timescale errors, updates W and returns the pending update U_h
  // [B,64,R,R,R] (zero for unscored robots and inactive timescales). Fused: the same in one
  // operator, U_h kept as its few cubes in `pending`; returns an undefined tensor.
  torch::Tensor observe(const CycleContext& ctx, const torch::Tensor& field);

  // Step 7.10: field = next + U_h, U_h being what observe returned (the fused path ignores it
  // and adds its pending cubes after a copy: one pass over the field either way).
  void add_pending(torch::Tensor& field, const torch::Tensor& next, const torch::Tensor& pending_update);

  // Step 9: hpred[k] = tanh(mean_xyz F[16k:16k+16] @ W[k]); returns the confidence of each
  // timescale cf [B,4] (from the error histories).
  torch::Tensor predict(const torch::Tensor& field);
  // The same from the channel means mean_xyz F [B,64] (the fused read-out's, brain/ops).
  torch::Tensor predict_from_means(const torch::Tensor& channel_means);

  HierarchicalPredictorOptions options;
  torch::Tensor W;      // [B,4,16,S]
  torch::Tensor hpred;  // [B,4,S]
  RingBuffer hist{nullptr};                 // sensory history, 1000 x [S]
  std::array<RingBuffer, 4> herr{{nullptr, nullptr, nullptr, nullptr}};  // 50 x scalar each
  // Fused path only: per-robot scratch [B, ops::hierarchy::pending_width(S)] (channel means at
  // cycle start, targets, the pending cubes; brain/ops/hierarchy_learn_math.h). Not state: not
  // a buffer, rewritten every cycle; registered scratch, so row views follow it.
  torch::Tensor pending;

  // The fused step 2 split in two for a graph-captured cycle (brain/cycle_graph.h): the
  // operator launch (device work only) and the host's ring-count bookkeeping that follows it.
  // observe() on a fused module does both.
  void launch_observe(const CycleContext& ctx, const torch::Tensor& field);
  void advance_host(const CycleContext& ctx) override;
  void write_facts(int64_t b, int64_t* facts) const override;  // hist and herr counts

 private:
  void observe_fused(const CycleContext& ctx, const torch::Tensor& field);

  torch::Tensor timescale_confidence();  // cf [B,4] from the error histories

  std::array<std::vector<bool>, 4> herr_pushed_;  // fused path: which robots pushed herr[k]
};
TORCH_MODULE(HierarchicalPredictor);

}  // namespace fieldbrain
