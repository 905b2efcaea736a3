// fieldbrain's fused reward-attractor operators (docs/cycle.md steps 6 and 7.9), registered as
//   fieldbrain::attractor_record_(Tensor(a!) bank, Tensor field, Tensor slot) -> ()
//     bank [B,A,64,R,R,R], field [B,64,R,R,R] float32, slot [B] int64 (any stride): for every
//     robot b with slot[b] >= 0, bank[b, slot[b]] = field[b]. Robots with slot -1 are untouched.
//   fieldbrain::attractor_pull_(Tensor(a!) field, Tensor bank, Tensor weights,
//                               Tensor(b!) workspace) -> ()
//     weights [B,A,2] float32 (brain/ops/attractor_math.h), workspace [B, 64(1+2A)] float64 scratch:
//     field[b] += sum over slots j with weight != 0 of (bank[b,j] - field[b]) * coefficient_j,
//     every coefficient from the same field (the one before any pull).
// Both run the same launches whatever the table holds (a slot's weight, not the host, decides
// whether it pulls), allocate nothing, and never sync with the host: what a CUDA graph needs.
// Sums are accumulated in double.
#pragma once

#include <ATen/core/Tensor.h>

namespace fieldbrain {
namespace ops {

void attractor_record_(at::Tensor& bank, const at::Tensor& field, const at::Tensor& slot);
void attractor_pull_(at::Tensor& field, const at::Tensor& bank, const at::Tensor& weights,
                     at::Tensor& workspace);

// Argument checks shared by the kernels (c10::Error naming the argument); return {B, A, R}.
struct AttractorShape {
  int64_t batch, slots, resolution;
};
AttractorShape check_attractor_record_args(const at::Tensor& bank, const at::Tensor& field,
                                           const at::Tensor& slot, c10::DeviceType device);
AttractorShape check_attractor_pull_args(const at::Tensor& field, const at::Tensor& bank,
                                         const at::Tensor& weights, const at::Tensor& workspace,
                                         c10::DeviceType device);

}  // namespace ops
}  // namespace fieldbrain
