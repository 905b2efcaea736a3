// The brain's inputs (sensors [B,S], reward [B]) as CPU float32 contiguous tensors, checked
// for shape, dtype and finiteness before any state changes. Reading them is no device sync in
// the intended use (they arrive from the host); a device input is copied once and counted.
// Shared by FieldBrain::step, FieldBrain::step_group and BrainGroup::step.
#pragma once

#include <vector>

#include <torch/torch.h>

namespace fieldbrain {

// Throws std::invalid_argument "<caller>: <name>... " naming the problem (shape, dtype, the
// first non-finite element).
torch::Tensor host_input(const char* caller, const torch::Tensor& t, const char* name,
                         const std::vector<int64_t>& shape);

}  // namespace fieldbrain
