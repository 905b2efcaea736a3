// The HRR algebra on tensors [..., D]: binding by circular convolution and everything built on
// its spectrum. Every function accepts float32 or float64 tensors with any leading batch dims on
// any device, broadcasts leading dims like torch's elementwise ops, returns a new tensor of the
// same dtype on the same device, and throws std::invalid_argument on mismatched D or dtype.
//
// Conventions (docs/hrr.md): A = DFT(a) unnormalised; bind multiplies spectra; the
// "involution" a†[i] = a[(-i) mod D] is the approximate inverse (conjugate spectrum).
#pragma once

#include <torch/torch.h>

namespace fieldbrain::hrr {

// Circular convolution c[i] = sum_j a[j] b[(i - j) mod D], via rfft/irfft(n = D), so odd D is
// exact too. Commutative and associative.
torch::Tensor bind(const torch::Tensor& a, const torch::Tensor& b);

// Approximate unbinding: bind(c, involution(b)) = circular correlation. Exact when b is unitary;
// for Gaussian b the result has cos ~ 1/sqrt(2) with the original filler (§3.2).
torch::Tensor unbind(const torch::Tensor& c, const torch::Tensor& b);

// a†[i] = a[(-i) mod D]; its spectrum is conj(A). involution(involution(a)) == a exactly.
torch::Tensor involution(const torch::Tensor& a);

// Regularised exact inverse: spectrum conj(B) / (|B|^2 + eps), with
// eps = relative_epsilon * mean_k |B_k|^2 per vector (Wiener-style).
// Near-zero-spectrum policy: a bin with |B_k|^2 far below eps maps to ~0 instead of
// blowing up, and an all-zero vector maps to all zeros (never NaN/Inf). Without noise,
// bind(bind(a, b), exact_inverse(b)) recovers a (1 - cos <= 1e-4 at the default); with any
// noise in the trace it amplifies that noise (k = 2 pairs: cos 0.36 vs 0.58 for the
// involution, §3.3), so prefer unitary vectors + unbind for stored structures.
torch::Tensor exact_inverse(const torch::Tensor& b, double relative_epsilon = 1e-8);

// Projects onto unitary vectors: every DFT bin is divided by its magnitude, so |U_k| = 1,
// ||u|| = 1 and unbind is exact. Bins with magnitude below the dtype's tiny are set to +1
// (so the zero vector maps to the identity delta, never NaN). With positive = true the real
// DC and Nyquist bins are forced to +1, which makes fractional powers a group (power below).
torch::Tensor make_unitary(const torch::Tensor& v, bool positive = false);

// The binding identity delta = (1, 0, ..., 0) of length dim.
torch::Tensor identity(int64_t dim, torch::TensorOptions options = torch::kFloat32);

// Weighted superposition of items [..., K, D] over dim -2 with weights broadcastable to
// [..., K] (undefined = all ones). With normalize, the result is scaled to unit L2 norm
// (an all-zero sum stays zero). Normalising changes magnitudes, never cosines (§3.4).
torch::Tensor bundle(const torch::Tensor& items, const torch::Tensor& weights = {},
                     bool normalize = false);
torch::Tensor bundle(torch::TensorList items, const torch::Tensor& weights = {},
                     bool normalize = false);

// Cyclic shift by `shifts` along D (norm-preserving; note it commutes with binding, §3.9.9).
torch::Tensor permute(const torch::Tensor& v, int64_t shifts = 1);
torch::Tensor inverse_permute(const torch::Tensor& v, int64_t shifts = 1);
// Fixed permutation: out[..., i] = v[..., permutation[i]]; permutation is an int64 [D]
// holding each of 0..D-1 once (checked).
torch::Tensor permute(const torch::Tensor& v, const torch::Tensor& permutation);
torch::Tensor inverse_permute(const torch::Tensor& v, const torch::Tensor& permutation);

// Fractional binding power: spectrum |V|^p * exp(i p arg V). power(v, 2) == bind(v, v),
// power(v, -1) is the (unregularised) exact inverse, power(v, 0) == identity. The law
// power(v, a) (*) power(v, b) == power(v, a + b) holds for every real a, b when v is
// "positive" unitary (make_unitary(v, true)); for other vectors non-integer powers are
// defined bin by bin with the principal phase.
torch::Tensor power(const torch::Tensor& v, double exponent);

// L2 normalisation along D (zero vectors stay zero).
torch::Tensor normalize(const torch::Tensor& v);

}  // namespace fieldbrain::hrr
