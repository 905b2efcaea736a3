#include "hrr/vocabulary.h"

#include <stdexcept>

#include "hrr/random_vectors.h"

namespace fieldbrain::hrr {

VocabularyImpl::VocabularyImpl(VocabularyOptions options) : options_(options) {
  if (options_.dim() < 1) throw std::invalid_argument("Vocabulary: dim must be >= 1");
  if (options_.dtype() != torch::kFloat32 && options_.dtype() != torch::kFloat64) {
    throw std::invalid_argument("Vocabulary: dtype must be float32 or float64");
  }
  vectors_ = register_buffer("vectors", torch::empty({0, options_.dim()}, options_.dtype()));
}

torch::Tensor VocabularyImpl::get(const std::string& name) {
  const auto found = index_.find(name);
  const int64_t row = found != index_.end() ? found->second : add({name}).front();
  return vectors_[row];
}

std::vector<int64_t> VocabularyImpl::add(const std::vector<std::string>& names) {
  std::vector<int64_t> rows;
  std::vector<torch::Tensor> fresh;
  rows.reserve(names.size());
  for (const std::string& name : names) {
    const auto found = index_.find(name);
    if (found != index_.end()) {
      rows.push_back(found->second);
      continue;
    }
    const int64_t row = size();
    fresh.push_back(named_vector(options_.seed(), name, options_.dim(), options_.unitary(),
                                 torch::TensorOptions().dtype(options_.dtype())));
    names_.push_back(name);
    index_.emplace(name, row);
    rows.push_back(row);
  }
  if (!fresh.empty()) {
    torch::NoGradGuard no_grad;
    const torch::Tensor grown =
        torch::cat({vectors_, torch::stack(fresh).to(vectors_.device())}, 0);
    vectors_.set_(grown);  // set_ keeps the registered buffer pointing at the new rows
  }
  return rows;
}

bool VocabularyImpl::contains(const std::string& name) const { return index_.count(name) > 0; }

int64_t VocabularyImpl::index_of(const std::string& name) const {
  const auto found = index_.find(name);
  if (found == index_.end()) throw std::out_of_range("Vocabulary: unknown name '" + name + "'");
  return found->second;
}

void VocabularyImpl::restore(std::vector<std::string> names, const torch::Tensor& vectors) {
  if (vectors.dim() != 2 || vectors.size(0) != static_cast<int64_t>(names.size()) ||
      vectors.size(1) != options_.dim() || vectors.scalar_type() != options_.dtype()) {
    throw std::invalid_argument("Vocabulary::restore: vectors must be [" +
                                std::to_string(names.size()) + ", " +
                                std::to_string(options_.dim()) + "] of the vocabulary's dtype");
  }
  std::unordered_map<std::string, int64_t> index;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!index.emplace(names[i], static_cast<int64_t>(i)).second) {
      throw std::invalid_argument("Vocabulary::restore: duplicate name '" + names[i] + "'");
    }
  }
  torch::NoGradGuard no_grad;
  vectors_.set_(vectors.to(vectors_.device()).contiguous().clone());
  names_ = std::move(names);
  index_ = std::move(index);
}

}  // namespace fieldbrain::hrr
