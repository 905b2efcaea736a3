// The host-known facts of one cycle, shared by the parts of the brain. Everything here comes
// from the host (inputs, counters), so branching on it needs no device sync; the tensors are
// views of the brain's static fact tables (brain/cycle_facts.h) on its device, written in
// place every cycle: handing them to the parts creates no tensor.
#pragma once

#include <vector>

#include <torch/torch.h>

namespace fieldbrain {

struct CycleContext {
  int64_t batch = 0;
  std::vector<int64_t> cycle;      // n per robot: cycles completed before this one
  std::vector<bool> scored;        // n >= 1: there is a previous prediction to score
  std::vector<bool> has_input;     // any |sensor| > 0.01
  std::vector<bool> skip_imprint;  // max |sensor| <= 0.01
  std::vector<float> reward;       // host copy of reward [B]

  torch::Tensor sensors;   // [B,S] device
  torch::Tensor n;         // [B] float device: cycle as float
  torch::Tensor scored_f;  // [B] float 0/1 device
  torch::Tensor reward_d;  // [B] float device
  torch::Tensor phase;     // [B] float device: 0.1 * n (the wave phase)
  torch::Tensor facts;     // [B, kFactColumns] int64 device (brain/cycle_facts.h)
  torch::Tensor value_facts;  // [B, kValueColumns] float device (n, scored, r, phase columns)

  // [B] float 0/1 tensor on `device` from a host flag per robot. Creates tensors: the
  // reference path's way; fused operators read `facts` instead.
  static torch::Tensor flags(const std::vector<bool>& v, const torch::Device& device) {
    auto t = torch::zeros({static_cast<int64_t>(v.size())}, torch::kFloat);
    auto* p = t.data_ptr<float>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = v[i] ? 1.0f : 0.0f;
    return t.to(device);
  }
  static torch::Tensor values(const std::vector<float>& v, const torch::Device& device) {
    auto t = torch::zeros({static_cast<int64_t>(v.size())}, torch::kFloat);
    std::copy(v.begin(), v.end(), t.data_ptr<float>());
    return t.to(device);
  }
};

}  // namespace fieldbrain
