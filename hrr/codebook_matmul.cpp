#include "hrr/codebook_matmul.h"

#include <algorithm>
#include <vector>

namespace fieldbrain::hrr {
namespace {

bool fast_path(const torch::Tensor& t) {
  return at::hasMKLDNN() && t.device().is_cpu() && t.scalar_type() == torch::kFloat32 &&
         t.layout() == torch::kStrided && !t.requires_grad();
}

}  // namespace

torch::Tensor prepare_codebook(const torch::Tensor& keys) {
  if (!fast_path(keys) || keys.dim() != 2 || keys.size(0) == 0) return {};
  return keys.contiguous().to_mkldnn();
}

torch::Tensor codebook_matmul(const torch::Tensor& queries, const torch::Tensor& keys,
                              const torch::Tensor& prepared) {
  // A handful of rows is a matrix-vector product, where oneDNN's per-call setup (~ms) costs
  // more than the reference BLAS saves.
  constexpr int64_t kMinRowsForFastPath = 8;
  const int64_t rows = queries.numel() / std::max<int64_t>(1, queries.size(-1));
  if (!fast_path(queries) || !fast_path(keys) || keys.size(0) == 0 || rows < kMinRowsForFastPath) {
    return torch::matmul(queries, keys.t());
  }
  const torch::Tensor weight = prepared.defined() ? prepared : prepare_codebook(keys);
  const torch::Tensor flat = queries.reshape({-1, queries.size(-1)}).contiguous();
  const torch::Tensor scores = at::mkldnn_linear(flat.to_mkldnn(), weight).to_dense();
  std::vector<int64_t> shape(queries.sizes().begin(), queries.sizes().end() - 1);
  shape.push_back(keys.size(0));
  return scores.view(shape);
}

}  // namespace fieldbrain::hrr
