#include "hrr/item_memory.h"

#include <limits>
#include <stdexcept>

#include "hrr/codebook_matmul.h"
#include "hrr/tensor_checks.h"

namespace fieldbrain::hrr {

ItemMemoryImpl::ItemMemoryImpl(ItemMemoryOptions options) : options_(options) {
  if (options_.dim() < 1) throw std::invalid_argument("ItemMemory: dim must be >= 1");
  if (options_.dtype() != torch::kFloat32 && options_.dtype() != torch::kFloat64) {
    throw std::invalid_argument("ItemMemory: dtype must be float32 or float64");
  }
  vectors_ = register_buffer("vectors", torch::empty({0, options_.dim()}, options_.dtype()));
  norms_ = register_buffer("norms", torch::empty({0}, options_.dtype()));
}

void ItemMemoryImpl::rebuild_norms() {
  torch::NoGradGuard no_grad;
  norms_.set_(vectors_.norm(2, {-1}));
  prepared_ = prepare_codebook(vectors_);
  prepared_for_ = vectors_.data_ptr();
}

void ItemMemoryImpl::add(const std::vector<std::string>& labels, const torch::Tensor& vectors) {
  check_vectors(vectors, "ItemMemory::add", "vectors");
  const torch::Tensor rows = vectors.dim() == 1 ? vectors.unsqueeze(0) : vectors;
  if (rows.dim() != 2 || rows.size(0) != static_cast<int64_t>(labels.size()) ||
      rows.size(1) != options_.dim()) {
    fail("ItemMemory::add", "vectors must be [" + std::to_string(labels.size()) + ", " +
                                std::to_string(options_.dim()) + "]");
  }
  torch::NoGradGuard no_grad;
  const torch::Tensor incoming = rows.to(vectors_.device(), options_.dtype());
  std::vector<int64_t> fresh_rows;
  std::vector<std::string> fresh_labels;
  torch::Tensor merged = vectors_.clone();
  std::unordered_map<std::string, int64_t> pending;  // a label repeated in one call: last wins
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto found = index_.find(labels[i]);
    if (found != index_.end()) {
      merged[found->second].copy_(incoming[static_cast<int64_t>(i)]);
      continue;
    }
    const auto again = pending.find(labels[i]);
    if (again != pending.end()) {
      fresh_rows[static_cast<std::size_t>(again->second)] = static_cast<int64_t>(i);
      continue;
    }
    pending.emplace(labels[i], static_cast<int64_t>(fresh_rows.size()));
    fresh_rows.push_back(static_cast<int64_t>(i));
    fresh_labels.push_back(labels[i]);
  }
  if (!fresh_rows.empty()) {
    const torch::Tensor pick = torch::tensor(fresh_rows, torch::kInt64).to(incoming.device());
    merged = torch::cat({merged, incoming.index_select(0, pick)}, 0);
    for (const std::string& l : fresh_labels) {
      index_.emplace(l, size());
      labels_.push_back(l);
    }
  }
  vectors_.set_(merged);
  rebuild_norms();
}

void ItemMemoryImpl::add_item(const std::string& label, const torch::Tensor& vector) {
  add(std::vector<std::string>{label}, vector);
}

bool ItemMemoryImpl::remove(const std::string& label) {
  const auto found = index_.find(label);
  if (found == index_.end()) return false;
  const int64_t row = found->second;
  torch::NoGradGuard no_grad;
  vectors_.set_(
      torch::cat({vectors_.narrow(0, 0, row), vectors_.narrow(0, row + 1, size() - row - 1)}, 0));
  labels_.erase(labels_.begin() + row);
  index_.erase(found);
  for (auto& entry : index_) {
    if (entry.second > row) --entry.second;
  }
  rebuild_norms();
  return true;
}

ItemQuery ItemMemoryImpl::query(const torch::Tensor& queries, int64_t k) const {
  check_pair(queries, vectors_, "ItemMemory::query");
  if (size() == 0) throw std::logic_error("ItemMemory::query: the memory is empty");
  if (k < 1) fail("ItemMemory::query", "k must be >= 1");
  const bool prepared_valid = prepared_.defined() && vectors_.data_ptr() == prepared_for_;
  torch::Tensor scores =
      codebook_matmul(queries, vectors_, prepared_valid ? prepared_ : torch::Tensor());  // [..., M]
  if (options_.similarity() == SimilarityKind::kCosine) {
    const double tiny = options_.dtype() == torch::kFloat32 ? std::numeric_limits<float>::min()
                                                            : std::numeric_limits<double>::min();
    scores = scores / (queries.norm(2, {-1}, true) * norms_).clamp_min(tiny);
  }
  auto [top, indices] = scores.topk(std::min(k, size()), -1);
  ItemQuery out{top, indices, top >= options_.threshold()};
  return out;
}

ItemQuery ItemMemoryImpl::cleanup(const torch::Tensor& queries) const {
  ItemQuery best = query(queries, 1);
  best.scores = best.scores.squeeze(-1);
  best.matched = best.matched.squeeze(-1);
  best.indices = torch::where(best.matched, best.indices.squeeze(-1),
                              torch::full_like(best.indices.squeeze(-1), -1));
  return best;
}

bool ItemMemoryImpl::contains(const std::string& label) const { return index_.count(label) > 0; }

int64_t ItemMemoryImpl::index_of(const std::string& label) const {
  const auto found = index_.find(label);
  if (found == index_.end()) {
    throw std::out_of_range("ItemMemory: unknown label '" + label + "'");
  }
  return found->second;
}

const std::string& ItemMemoryImpl::label(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw std::out_of_range("ItemMemory: no item at index " + std::to_string(index));
  }
  return labels_[static_cast<std::size_t>(index)];
}

}  // namespace fieldbrain::hrr
