// The brain's inputs (sensors [B,S], reward [B]) as CPU float32 contiguous tensors, checked
// for shape, dtype, finiteness and range before any state changes. Reading them is no device
// sync in the intended use (they arrive from the host); a device input is copied once and
// counted.
// Shared by FieldBrain::step, FieldBrain::step_group and BrainGroup::step.
#pragma once

#include <vector>

#include <torch/torch.h>

namespace fieldbrain {

// The largest magnitude a sensor value or a reward may have (the fieldbrain profile;
// docs/operating.md "Limits"): the original em-brain's own bound (its validate_list_input
// refuses anything outside [-10, 10]), so every client written for it fits. The cycle squares
// and multiplies its inputs (prediction errors, the hierarchy's written targets, the field's
// variance in the smoothed information): 1e20 once overflowed float32 and left the field NaN for
// good (issue 36), and inputs held at 100 overflow the smoothed information within ~80 cycles
// (R = 8), while inputs held at +-10 (or at random extremes within it) keep every buffer finite
// and small (test/brain/finite_state_test.cpp).
constexpr float kMaxInputMagnitude = 10.0f;

// Throws std::invalid_argument "<caller>: <name>... " naming the problem (shape, dtype, the
// first non-finite element, the first element beyond +-kMaxInputMagnitude).
torch::Tensor host_input(const char* caller, const torch::Tensor& t, const char* name,
                         const std::vector<int64_t>& shape);

}  // namespace fieldbrain
