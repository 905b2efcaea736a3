// Batched similarity between HRR vectors. Pairwise forms broadcast leading dims like
// elementwise ops; matrix forms compare every query with every row of a codebook through one
// matmul (the batched clean-up primitive).
#pragma once

#include <torch/torch.h>

namespace fieldbrain::hrr {

// <a, b> along D; shapes broadcast; result has the broadcast leading shape.
torch::Tensor dot(const torch::Tensor& a, const torch::Tensor& b);

// cos(a, b) along D; a zero vector has cosine 0 with everything (no NaN).
torch::Tensor cosine(const torch::Tensor& a, const torch::Tensor& b);

// queries [..., D] against keys [M, D] -> [..., M].
torch::Tensor dot_matrix(const torch::Tensor& queries, const torch::Tensor& keys);
torch::Tensor cosine_matrix(const torch::Tensor& queries, const torch::Tensor& keys);

}  // namespace fieldbrain::hrr
