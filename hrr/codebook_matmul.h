// Scores of many queries against a codebook, queries [..., D] x keys [M, D]^T -> [..., M]:
// the inner loop of every clean-up. Debian's LibTorch links the netlib reference BLAS
// (~0.7 GFLOP/s on this machine), so on the CPU in float32 the product goes through oneDNN
// (bundled with LibTorch, ~25x faster here); other devices and dtypes use torch::matmul.
#pragma once

#include <torch/torch.h>

namespace fieldbrain::hrr {

// keys in the layout the fast path wants (an undefined tensor when there is no fast path);
// build it once per codebook and pass it to codebook_matmul.
torch::Tensor prepare_codebook(const torch::Tensor& keys);

// prepared: the result of prepare_codebook(keys) for these exact keys, or undefined.
torch::Tensor codebook_matmul(const torch::Tensor& queries, const torch::Tensor& keys,
                              const torch::Tensor& prepared = {});

}  // namespace fieldbrain::hrr
