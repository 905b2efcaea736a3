// The field's stencils, computed as the original's torch calls round them, without their cost:
// the depthwise conv3d of EvolvedFieldDynamics (oneDNN: per output, an FMA chain over the
// kernel taps in (kx, ky, kz) order, zero padding) and tensor_ops.apply_diffusion (rolls and
// elementwise float32 ops). Bit for bit equal to the torch calls they replace (checked by
// test/legacy/field_stencils_test.cpp); CPU float32, contiguous [R,R,R,C] tensors.
#pragma once

#include <torch/torch.h>

namespace fieldbrain::legacy {

// _apply_learned_diffusion: content + sum over axes a of conv3d(content, [1,-2,1] along a,
// zero padding) * diffusion[..., a], axes x, y, z in that order. content [R,R,R,C],
// diffusion [R,R,R,>=3] (any strides).
torch::Tensor learned_diffusion(const torch::Tensor& content, const torch::Tensor& diffusion);

// conv3d(activation, 3x3x3 kernel of `weight` with a zero centre, zero padding, depthwise):
// activation [R,R,R,C] -> [R,R,R,C].
torch::Tensor neighbour_sum(const torch::Tensor& activation, float weight);

// tensor_ops.apply_diffusion(field, rate, dims=(0, 1, 2)): periodic (roll) Laplacian.
torch::Tensor periodic_diffusion(const torch::Tensor& field, double rate);
// The same into `out` (contiguous, the field's shape, not the field's storage).
void periodic_diffusion_into(const torch::Tensor& field, torch::Tensor& out, double rate);

}  // namespace fieldbrain::legacy
