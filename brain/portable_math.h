// Float32 results that are the same on every LibTorch release: computed in float64 and rounded
// once. The reference cycle is the research brain's checkable one, so its numbers should not
// depend on which LibTorch a user built against. Run op by op under LibTorch 1.13 and 2.6 on the
// same inputs, the float32 ops of the cycle gave the same bits except three: sin (1 ulp in 5-23%
// of elements), cosine_similarity (over a flattened field 1e-5 apart, the sum's order) and the
// 2-norm of a row (1 ulp, some rows). In float64 either release is accurate far below float32's
// rounding step, so the rounded result is the same on both (scripts/reference/fieldbrain_ref.py
// does the same).
#pragma once

#include <torch/torch.h>

namespace fieldbrain::portable {

inline torch::Tensor sin(const torch::Tensor& x) {
  return torch::sin(x.to(torch::kDouble)).to(x.scalar_type());
}

// x / (||x||_2 over `dim` + 1e-8).
inline torch::Tensor unit_rows(const torch::Tensor& x, int64_t dim) {
  const auto norm = at::linalg_vector_norm(x.to(torch::kDouble), 2, torch::IntArrayRef{dim}, true,
                                           c10::nullopt)
                        .to(x.scalar_type());
  return x / (norm + 1e-8);
}

// cosine_similarity with eps 1e-8, rounded to `result`. An input already in float64 is used as
// it is (a caller comparing one field with many converts the field once).
inline torch::Tensor cosine_similarity(const torch::Tensor& a, const torch::Tensor& b, int64_t dim,
                                       c10::ScalarType result) {
  return torch::cosine_similarity(a.to(torch::kDouble), b.to(torch::kDouble), dim, 1e-8)
      .to(result);
}

inline torch::Tensor cosine_similarity(const torch::Tensor& a, const torch::Tensor& b, int64_t dim) {
  return cosine_similarity(a, b, dim, a.scalar_type());
}

}  // namespace fieldbrain::portable
