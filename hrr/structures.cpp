#include "hrr/structures.h"

#include <string>
#include <vector>

#include "hrr/algebra.h"
#include "hrr/tensor_checks.h"

namespace fieldbrain::hrr {
namespace {

void check_index(int64_t index, const char* function) {
  if (index < 0) fail(function, "index must be >= 0, got " + std::to_string(index));
}

void check_items(const torch::Tensor& items, const char* function) {
  check_vectors(items, function, "items");
  if (items.dim() < 2) fail(function, "items must be [..., L, D]");
}

// P^power as an index map (applying `permutation` `power` times).
torch::Tensor permutation_power(const torch::Tensor& permutation, int64_t power) {
  torch::Tensor result = torch::arange(permutation.size(0), permutation.options());
  for (int64_t i = 0; i < power; ++i) result = result.index_select(0, permutation);
  return result;
}

}  // namespace

torch::Tensor encode_record(const torch::Tensor& roles, const torch::Tensor& fillers,
                            bool normalize) {
  check_pair(roles, fillers, "hrr::encode_record");
  if (roles.dim() < 2 || fillers.dim() < 2) {
    fail("hrr::encode_record", "roles and fillers must be [..., K, D]");
  }
  return bundle(bind(roles, fillers), {}, normalize);
}

torch::Tensor query_record(const torch::Tensor& record, const torch::Tensor& role) {
  return unbind(record, role);
}

torch::Tensor encode_sequence_by_position(const torch::Tensor& items,
                                          const torch::Tensor& position) {
  check_items(items, "hrr::encode_sequence_by_position");
  check_pair(items, position, "hrr::encode_sequence_by_position");
  const int64_t length = items.size(-2);
  std::vector<torch::Tensor> keys;
  keys.reserve(static_cast<std::size_t>(length));
  // Repeated binding instead of power(position, i): exact integer powers, no phase wrapping.
  torch::Tensor key = identity(items.size(-1), items.options());
  for (int64_t i = 0; i < length; ++i) {
    keys.push_back(key);
    key = bind(key, position);
  }
  return bundle(bind(torch::stack(keys), items));
}

torch::Tensor decode_sequence_by_position(const torch::Tensor& sequence,
                                          const torch::Tensor& position, int64_t index) {
  check_index(index, "hrr::decode_sequence_by_position");
  check_pair(sequence, position, "hrr::decode_sequence_by_position");
  return unbind(sequence, power(position, static_cast<double>(index)));
}

torch::Tensor encode_sequence_by_permutation(const torch::Tensor& items,
                                             const torch::Tensor& permutation) {
  check_items(items, "hrr::encode_sequence_by_permutation");
  torch::Tensor sum = torch::zeros_like(items.select(-2, 0));
  for (int64_t i = 0; i < items.size(-2); ++i) {
    sum = sum + permute(items.select(-2, i), permutation_power(permutation, i));
  }
  return sum;
}

torch::Tensor decode_sequence_by_permutation(const torch::Tensor& sequence,
                                             const torch::Tensor& permutation, int64_t index) {
  check_index(index, "hrr::decode_sequence_by_permutation");
  return inverse_permute(sequence, permutation_power(permutation, index));
}

}  // namespace fieldbrain::hrr
