// Hierarchical prediction (docs/cycle.md steps 2 and 9 first half; legacy §4.2): four
// timescales (immediate, last 10, last 100, all history) each with a linear readout W[k]
// [16,S] from the mean of its 16 field channels, learned from its own error, and the pending
// field update U_h that writes each timescale's target pattern around the enc2field sites.
// Two types over one state (HierarchicalPredictorState): HierarchicalPredictor, the ATen
// methods of the reference cycle, and FusedHierarchicalPredictor
// (brain/hierarchical_predictor_fused.h), the fused cycle's operators.
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
};

// The state both variants keep (the save format's buffers, under these names), and what both
// cycles read from it: the robots' initial weights, step 9's read-outs, the ring counts.
class HierarchicalPredictorState : public BrainModule {
 public:
  void set_batch(int64_t batch) override { options.batch(batch); }

  // Construction 5 for robot b: W[b,k,j,s] = (2u - 1) beta_k with u element (k*16 + j)*S + s
  // of the robot's hierarchy uniform stream (docs/cycle.md "Randomness").
  void init_robot(int64_t b, uint64_t seed);

  // Step 9: hpred[k] = tanh(mean_xyz F[16k:16k+16] @ W[k]); returns the confidence of each
  // timescale cf [B,4] (from the error histories).
  torch::Tensor predict(const torch::Tensor& field);
  // The same from the channel means mean_xyz F [B,64] (the fused read-out's, brain/ops).
  torch::Tensor predict_from_means(const torch::Tensor& channel_means);

  void write_facts(int64_t b, int64_t* facts) const override;  // hist and herr counts

  HierarchicalPredictorOptions options;
  torch::Tensor W;      // [B,4,16,S]
  torch::Tensor hpred;  // [B,4,S]
  RingBuffer hist{nullptr};                 // sensory history, 1000 x [S]
  std::array<RingBuffer, 4> herr{{nullptr, nullptr, nullptr, nullptr}};  // 50 x scalar each

 protected:
  explicit HierarchicalPredictorState(HierarchicalPredictorOptions options);

 private:
  torch::Tensor timescale_confidence();  // cf [B,4] from the error histories
};

// The reference cycle's steps 2 and 7.10 (ATen ops).
class HierarchicalPredictorImpl : public HierarchicalPredictorState {
 public:
  explicit HierarchicalPredictorImpl(HierarchicalPredictorOptions options);

  // Step 2 with the field at cycle start. Always pushes the input to the history; for scored
  // robots computes the timescale errors, updates W and returns the pending update U_h
  // [B,64,R,R,R] (zero for unscored robots and inactive timescales).
  torch::Tensor observe(const CycleContext& ctx, const torch::Tensor& field);

  // Step 7.10: field = next + U_h, U_h being what observe returned (one pass over the field).
  void add_pending(torch::Tensor& field, const torch::Tensor& next, const torch::Tensor& pending_update);
};
TORCH_MODULE(HierarchicalPredictor);

}  // namespace fieldbrain
