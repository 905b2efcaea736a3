// Random HRR vectors. Everything is drawn on the CPU and then moved to options.device():
// PyTorch's CPU and CUDA generators give different streams for one seed (§3.9.12), so drawing
// on the CPU keeps a seed meaning the same vectors on every device.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace fieldbrain::hrr {

// A CPU generator seeded with `seed` (convenience for callers and tests).
torch::Generator make_generator(std::uint64_t seed);

// shape = [..., D]; iid N(0, 1/D) entries, so E||v||^2 = 1 (not exactly unit; see normalize()).
torch::Tensor random(torch::IntArrayRef shape, torch::Generator& generator,
                     torch::TensorOptions options = torch::kFloat32);

// make_unitary(random(...)): uniform random phases, |U_k| = 1, ||u|| = 1.
torch::Tensor random_unitary(torch::IntArrayRef shape, torch::Generator& generator,
                             torch::TensorOptions options = torch::kFloat32);

// A uniformly random permutation of 0..dim-1 (int64 [dim], on the CPU).
torch::Tensor random_permutation(int64_t dim, torch::Generator& generator);

// The deterministic vector of (seed, name): bit-identical in every process and on every
// platform, independent of torch's RNG implementation. Scheme "sha256-boxmuller-v1":
//   key     = SHA-256("fieldbrain-hrr-vocabulary-v1" || seed as u64 LE || UTF-8 name)
//   block_j = SHA-256(key || j as u64 LE), j = 0, 1, ...; each block = 4 u64 LE words w
//   u       = ((w >> 11) + 0.5) * 2^-53 in (0, 1), consumed in pairs (u1, u2)
//   z       = sqrt(-2 ln u1) * (cos(2 pi u2), sin(2 pi u2)), first dim values, / sqrt(dim)
// computed in float64, then made unitary (also in float64) if asked, then cast to options.
// (Why not a torch generator seeded from the hash: mt19937 keeps only 32 bits of its seed,
// so two names would collide after ~2^16 names with noticeable probability.)
torch::Tensor named_vector(std::uint64_t seed, const std::string& name, int64_t dim,
                           bool unitary = false, torch::TensorOptions options = torch::kFloat32);

}  // namespace fieldbrain::hrr
