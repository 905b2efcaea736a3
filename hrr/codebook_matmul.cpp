#include "hrr/codebook_matmul.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace fieldbrain::hrr {
namespace {

// oneDNN's inner product must give the plain product's scores before the clean-up trusts it:
// Debian 13's LibTorch 2.6 with its oneDNN 3.7.2 was seen returning wrong scores on an AVX-512
// AMD machine (clean-up accuracy 0.965 instead of 0.985; exact with ONEDNN_MAX_CPU_ISA=AVX2).
// So the first fast-path product of the process is also computed in double precision on its
// first 64 queries, and compared: any score further from it than float rounding allows
// (kSelfCheckTolerance, relative to the largest score) switches the fast path off for the rest
// of the process, with one warning. A correct product is within ~1e-6 (measured: unit keys,
// D = 512 and 1,024, M = 1,000 and 10,000).
constexpr double kSelfCheckTolerance = 1e-4;

bool mkldnn_product_agrees(const torch::Tensor& flat, const torch::Tensor& keys,
                           const torch::Tensor& scores) {
  torch::NoGradGuard no_grad;
  const int64_t rows = std::min<int64_t>(flat.size(0), 64);
  const torch::Tensor exact =
      torch::matmul(flat.narrow(0, 0, rows).to(torch::kFloat64), keys.to(torch::kFloat64).t());
  const double scale = std::max(exact.abs().max().item<double>(), 1e-30);
  const double error =
      (scores.narrow(0, 0, rows).to(torch::kFloat64) - exact).abs().max().item<double>() / scale;
  if (error <= kSelfCheckTolerance) return true;
  // LibTorch's warning channel (stderr by default): the HRR library has no logger of its own.
  TORCH_WARN("hrr: oneDNN's float32 inner product (aten::mkldnn_linear) disagrees with the plain "
             "product (relative error ", error, " on ", rows, "x", flat.size(1), " queries by ",
             keys.size(0), "x", keys.size(1), " keys); clean-up scores use torch::matmul from now "
             "on (slower with a reference BLAS)");
  return false;
}

// -1 before the first fast-path product, then 1 (trusted) or 0 (off).
std::atomic<int> mkldnn_trusted{-1};

bool fast_path(const torch::Tensor& t) {
  return at::hasMKLDNN() && mkldnn_trusted.load(std::memory_order_relaxed) != 0 &&
         t.device().is_cpu() && t.scalar_type() == torch::kFloat32 &&
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
  if (mkldnn_trusted.load(std::memory_order_acquire) != 1) {
    static std::mutex check_mutex;
    std::lock_guard<std::mutex> lock(check_mutex);
    if (mkldnn_trusted.load() == -1) mkldnn_trusted.store(mkldnn_product_agrees(flat, keys, scores));
    if (mkldnn_trusted.load() == 0) return torch::matmul(queries, keys.t());
  }
  std::vector<int64_t> shape(queries.sizes().begin(), queries.sizes().end() - 1);
  shape.push_back(keys.size(0));
  return scores.view(shape);
}

}  // namespace fieldbrain::hrr
