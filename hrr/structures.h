// Composite structures built from the algebra: role-filler records and sequences.
// All take stacked tensors so a whole batch of structures is encoded in one call.
#pragma once

#include <torch/torch.h>

namespace fieldbrain::hrr {

// Record (hash table): sum_i bind(roles[..., i, :], fillers[..., i, :]); roles and fillers
// [..., K, D] broadcast against each other. Use unitary roles for nested records (§3.6).
torch::Tensor encode_record(const torch::Tensor& roles, const torch::Tensor& fillers,
                            bool normalize = false);
// Noisy filler of `role` [..., D]; clean it up with an ItemMemory.
torch::Tensor query_record(const torch::Tensor& record, const torch::Tensor& role);

// Position-bound sequence: sum_i bind(power(position, i), items[..., i, :]) for i = 0..L-1.
// `position` [D] should be unitary so every power stays unitary and decoding is exact per
// term. Preferred over cyclic shifts, which commute with binding and alias (§3.9.9).
torch::Tensor encode_sequence_by_position(const torch::Tensor& items,
                                          const torch::Tensor& position);
torch::Tensor decode_sequence_by_position(const torch::Tensor& sequence,
                                          const torch::Tensor& position, int64_t index);

// Permutation-bound sequence: sum_i P^i(items[..., i, :]) with a fixed random permutation P
// (int64 [D], see random_permutation()); item i is read back with P^-i.
torch::Tensor encode_sequence_by_permutation(const torch::Tensor& items,
                                             const torch::Tensor& permutation);
torch::Tensor decode_sequence_by_permutation(const torch::Tensor& sequence,
                                             const torch::Tensor& permutation, int64_t index);

}  // namespace fieldbrain::hrr
