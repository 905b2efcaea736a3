// A vocabulary of named symbols: each name's vector is derived from (seed, name) by
// named_vector(), so it is identical across runs, processes and machines, and vocabularies
// built in any order agree on every shared name. torch::nn-style module; the vectors live in
// the buffer "vectors" [N, D] (visible to named_buffers() and .to(device)).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace fieldbrain::hrr {

struct VocabularyOptions {
  explicit VocabularyOptions(int64_t dim) : dim_(dim) {}
  TORCH_ARG(int64_t, dim);
  TORCH_ARG(std::uint64_t, seed) = 0;
  // Unitary symbols (exact unbinding, no drift in chains); Gaussian N(0, 1/D) otherwise.
  TORCH_ARG(bool, unitary) = false;
  TORCH_ARG(torch::Dtype, dtype) = torch::kFloat32;
};

class VocabularyImpl : public torch::nn::Module {
 public:
  explicit VocabularyImpl(VocabularyOptions options);

  // The vector of `name` [D], derived and appended on first use.
  torch::Tensor get(const std::string& name);
  // Adds every missing name; returns their row indices in order.
  std::vector<int64_t> add(const std::vector<std::string>& names);

  bool contains(const std::string& name) const;
  int64_t index_of(const std::string& name) const;  // throws std::out_of_range
  const std::vector<std::string>& names() const { return names_; }
  int64_t size() const { return static_cast<int64_t>(names_.size()); }
  const torch::Tensor& vectors() const { return vectors_; }  // [N, D]
  const VocabularyOptions& options() const { return options_; }

  // Replaces the whole content (used by load; rows must match names, dim and dtype).
  void restore(std::vector<std::string> names, const torch::Tensor& vectors);

 private:
  VocabularyOptions options_;
  std::vector<std::string> names_;
  std::unordered_map<std::string, int64_t> index_;
  torch::Tensor vectors_;
};

TORCH_MODULE(Vocabulary);

}  // namespace fieldbrain::hrr
