// The clean-up (item) memory: M labelled vectors in one buffer "vectors" [M, D], queried in
// batches by one matmul + topk (never a Python-style loop over items, torchhd #5). Add and
// remove address items by label only (no need to pass the old vector, torchhd #62).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

namespace fieldbrain::hrr {

enum class SimilarityKind { kCosine, kDot };

struct ItemMemoryOptions {
  explicit ItemMemoryOptions(int64_t dim) : dim_(dim) {}
  TORCH_ARG(int64_t, dim);
  TORCH_ARG(torch::Dtype, dtype) = torch::kFloat32;
  TORCH_ARG(SimilarityKind, similarity) = SimilarityKind::kCosine;
  // A match needs score >= threshold (cleanup() reports -1 otherwise). Choose it between the
  // noise floor (sd 1/sqrt(D)) and the expected signal (1/sqrt(k+1) for k pairs), §3.7.
  TORCH_ARG(double, threshold) = -std::numeric_limits<double>::infinity();
};

// Top-k answer for queries [..., D]: scores and row indices [..., k] (best first) and
// `matched` = score >= threshold.
struct ItemQuery {
  torch::Tensor scores;
  torch::Tensor indices;
  torch::Tensor matched;
};

class ItemMemoryImpl : public torch::nn::Module {
 public:
  explicit ItemMemoryImpl(ItemMemoryOptions options);

  // Adds or replaces items by label; vectors [N, D] (or [D] for one label).
  void add(const std::vector<std::string>& labels, const torch::Tensor& vectors);
  void add_item(const std::string& label, const torch::Tensor& vector);
  // Removes the item; false if the label is unknown. Row indices above it shift down by one.
  bool remove(const std::string& label);

  // Top-k over all items for queries [..., D] (same dtype and device as the memory).
  // k is clamped to the number of items; an empty memory throws std::logic_error.
  ItemQuery query(const torch::Tensor& queries, int64_t k = 1) const;
  // Top-1 per query: indices [...] with -1 where the best score is below the threshold.
  ItemQuery cleanup(const torch::Tensor& queries) const;

  bool contains(const std::string& label) const;
  int64_t index_of(const std::string& label) const;  // throws std::out_of_range
  const std::string& label(int64_t index) const;     // throws std::out_of_range
  const std::vector<std::string>& labels() const { return labels_; }
  int64_t size() const { return static_cast<int64_t>(labels_.size()); }
  const torch::Tensor& vectors() const { return vectors_; }
  const ItemMemoryOptions& options() const { return options_; }

 private:
  void rebuild_norms();

  ItemMemoryOptions options_;
  std::vector<std::string> labels_;
  std::unordered_map<std::string, int64_t> index_;
  torch::Tensor vectors_;  // [M, D]
  torch::Tensor norms_;    // [M], cached for cosine scores
  // vectors_ in the layout of the fast CPU product (codebook_matmul.h), valid while
  // vectors_ still points at the storage it was built from.
  torch::Tensor prepared_;
  const void* prepared_for_ = nullptr;
};

TORCH_MODULE(ItemMemory);

}  // namespace fieldbrain::hrr
