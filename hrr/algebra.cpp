#include "hrr/algebra.h"

#include <limits>
#include <string>

#include "hrr/tensor_checks.h"

namespace fieldbrain::hrr {
namespace {

namespace fft = torch::fft;

torch::Tensor spectrum(const torch::Tensor& v) { return fft::rfft(v, c10::nullopt, -1); }

torch::Tensor from_spectrum(const torch::Tensor& s, int64_t dim) {
  // n = D is what makes odd D correct: without it irfft returns 2 * (bins - 1) samples.
  return fft::irfft(s, dim, -1);
}

double tiny_for(const torch::Tensor& v) {
  return v.scalar_type() == torch::kFloat32 ? std::numeric_limits<float>::min()
                                            : std::numeric_limits<double>::min();
}

// product of spectra, in place in the first one when no broadcasting widens it (saves one
// complex [..., D/2+1] allocation per call)
torch::Tensor multiply_spectra(torch::Tensor first, const torch::Tensor& second) {
  // (not under autograd: the in-place product would overwrite what the backward pass needs)
  if (first.sizes() == second.sizes() && !first.requires_grad() && !second.requires_grad()) {
    return first.mul_(second);
  }
  return first * second;
}

}  // namespace

torch::Tensor bind(const torch::Tensor& a, const torch::Tensor& b) {
  check_pair(a, b, "hrr::bind");
  return from_spectrum(multiply_spectra(spectrum(a), spectrum(b)), a.size(-1));
}

torch::Tensor unbind(const torch::Tensor& c, const torch::Tensor& b) {
  check_pair(c, b, "hrr::unbind");
  // conj of the spectrum == involution in the signal domain, without the flip/copy.
  return from_spectrum(multiply_spectra(spectrum(c), spectrum(b).conj()), c.size(-1));
}

torch::Tensor involution(const torch::Tensor& a) {
  check_vectors(a, "hrr::involution", "input");
  const int64_t d = a.size(-1);
  if (d == 1) return a.clone();
  return torch::cat({a.narrow(-1, 0, 1), a.narrow(-1, 1, d - 1).flip({-1})}, -1);
}

torch::Tensor exact_inverse(const torch::Tensor& b, double relative_epsilon) {
  check_vectors(b, "hrr::exact_inverse", "input");
  if (!(relative_epsilon >= 0.0)) fail("hrr::exact_inverse", "relative_epsilon must be >= 0");
  const torch::Tensor spec = spectrum(b);
  const torch::Tensor power = spec.abs().square();
  // Parseval: the mean of |B_k|^2 over all D bins is ||b||^2, so eps scales with the vector.
  // The floor at the dtype's tiny keeps 0 / 0 from happening for an all-zero b.
  const torch::Tensor eps =
      (b.square().sum(-1, /*keepdim=*/true) * relative_epsilon).clamp_min(tiny_for(b));
  // Multiply by a real reciprocal: complex / real division rescales by |denominator|^2, which
  // underflows for a tiny eps and would turn 0 / eps into NaN.
  return from_spectrum(spec.conj() * (power + eps).reciprocal(), b.size(-1));
}

torch::Tensor make_unitary(const torch::Tensor& v, bool positive) {
  check_vectors(v, "hrr::make_unitary", "input");
  const int64_t d = v.size(-1);
  torch::Tensor spec = spectrum(v);
  const torch::Tensor magnitude = spec.abs();
  const torch::Tensor degenerate = magnitude <= tiny_for(v);
  spec = torch::where(degenerate, torch::ones_like(spec),
                      spec * magnitude.clamp_min(tiny_for(v)).reciprocal());
  if (positive) {
    spec.narrow(-1, 0, 1).fill_(1.0);
    if (d % 2 == 0 && d > 1) spec.narrow(-1, d / 2, 1).fill_(1.0);
  }
  return from_spectrum(spec, d);
}

torch::Tensor identity(int64_t dim, torch::TensorOptions options) {
  if (dim < 1) fail("hrr::identity", "dim must be >= 1, got " + std::to_string(dim));
  torch::Tensor delta = torch::zeros({dim}, options);
  delta[0] = 1.0;
  return delta;
}

torch::Tensor bundle(const torch::Tensor& items, const torch::Tensor& weights, bool normalize_) {
  check_vectors(items, "hrr::bundle", "items");
  if (items.dim() < 2) fail("hrr::bundle", "items must be [..., K, D]");
  torch::Tensor sum;
  if (weights.defined()) {
    if (weights.dim() < 1 || weights.size(-1) != items.size(-2)) {
      fail("hrr::bundle",
           "weights must be broadcastable to [..., K] with K = " + std::to_string(items.size(-2)));
    }
    sum = (items * weights.to(items.options()).unsqueeze(-1)).sum(-2);
  } else {
    sum = items.sum(-2);
  }
  return normalize_ ? normalize(sum) : sum;
}

torch::Tensor bundle(torch::TensorList items, const torch::Tensor& weights, bool normalize_) {
  if (items.empty()) fail("hrr::bundle", "needs at least one item");
  return bundle(torch::stack(items, -2), weights, normalize_);
}

torch::Tensor permute(const torch::Tensor& v, int64_t shifts) {
  check_vectors(v, "hrr::permute", "input");
  return torch::roll(v, {shifts}, {-1});
}

torch::Tensor inverse_permute(const torch::Tensor& v, int64_t shifts) {
  check_vectors(v, "hrr::inverse_permute", "input");
  return torch::roll(v, {-shifts}, {-1});
}

namespace {
void check_permutation(const torch::Tensor& v, const torch::Tensor& permutation,
                       const char* function) {
  check_vectors(v, function, "input");
  if (!permutation.defined() || permutation.dim() != 1 ||
      permutation.scalar_type() != torch::kInt64 || permutation.size(0) != v.size(-1)) {
    fail(function,
         "permutation must be an int64 tensor [D] with D = " + std::to_string(v.size(-1)));
  }
  const torch::Tensor sorted = std::get<0>(permutation.sort());
  if (!sorted.equal(torch::arange(v.size(-1), permutation.options()))) {
    fail(function, "permutation must hold each index 0..D-1 exactly once");
  }
}
}  // namespace

torch::Tensor permute(const torch::Tensor& v, const torch::Tensor& permutation) {
  check_permutation(v, permutation, "hrr::permute");
  return v.index_select(-1, permutation.to(v.device()));
}

torch::Tensor inverse_permute(const torch::Tensor& v, const torch::Tensor& permutation) {
  check_permutation(v, permutation, "hrr::inverse_permute");
  return v.index_select(-1, permutation.argsort().to(v.device()));
}

torch::Tensor power(const torch::Tensor& v, double exponent) {
  check_vectors(v, "hrr::power", "input");
  const torch::Tensor spec = spectrum(v);
  const torch::Tensor raised = torch::polar(spec.abs().pow(exponent), spec.angle() * exponent);
  // A real-negative DC (or, for even D, Nyquist) bin raised to a fractional power leaves the
  // real axis, and a real signal cannot hold that bin's imaginary part: keep its real part.
  // The CPU's inverse FFT drops it anyway; cuFFT's does not, and on an H200 the power of a
  // D = 4096 vector came out 2/D away from the CPU's (and the float64) result.
  const torch::Tensor parts = torch::view_as_real(raised);  // [..., bins, 2], a view
  parts.select(-2, 0).select(-1, 1).zero_();
  const int64_t d = v.size(-1);
  if (d % 2 == 0) parts.select(-2, d / 2).select(-1, 1).zero_();
  return from_spectrum(raised, d);
}

torch::Tensor normalize(const torch::Tensor& v) {
  check_vectors(v, "hrr::normalize", "input");
  return v / v.norm(2, {-1}, /*keepdim=*/true).clamp_min(tiny_for(v));
}

}  // namespace fieldbrain::hrr
