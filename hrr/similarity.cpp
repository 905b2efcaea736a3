#include "hrr/similarity.h"

#include <limits>

#include "hrr/codebook_matmul.h"
#include "hrr/tensor_checks.h"

namespace fieldbrain::hrr {
namespace {

torch::Tensor norms(const torch::Tensor& v) { return v.norm(2, {-1}); }

torch::Tensor safe_divide(const torch::Tensor& num, const torch::Tensor& den) {
  // Zero norms give a zero similarity instead of 0/0.
  const double tiny = num.scalar_type() == torch::kFloat32 ? std::numeric_limits<float>::min()
                                                           : std::numeric_limits<double>::min();
  return num / den.clamp_min(tiny);
}

void check_codebook(const torch::Tensor& queries, const torch::Tensor& keys, const char* function) {
  check_pair(queries, keys, function);
  if (keys.dim() != 2) fail(function, "keys must be a codebook [M, D]");
}

}  // namespace

torch::Tensor dot(const torch::Tensor& a, const torch::Tensor& b) {
  check_pair(a, b, "hrr::dot");
  return (a * b).sum(-1);
}

torch::Tensor cosine(const torch::Tensor& a, const torch::Tensor& b) {
  check_pair(a, b, "hrr::cosine");
  return safe_divide((a * b).sum(-1), norms(a) * norms(b));
}

torch::Tensor dot_matrix(const torch::Tensor& queries, const torch::Tensor& keys) {
  check_codebook(queries, keys, "hrr::dot_matrix");
  return codebook_matmul(queries, keys);
}

torch::Tensor cosine_matrix(const torch::Tensor& queries, const torch::Tensor& keys) {
  check_codebook(queries, keys, "hrr::cosine_matrix");
  return safe_divide(codebook_matmul(queries, keys), norms(queries).unsqueeze(-1) * norms(keys));
}

}  // namespace fieldbrain::hrr
