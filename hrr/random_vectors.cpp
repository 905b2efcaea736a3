#include "hrr/random_vectors.h"

#include <cmath>
#include <string>
#include <vector>

#include "hrr/algebra.h"
#include "hrr/sha256.h"
#include "hrr/tensor_checks.h"

namespace fieldbrain::hrr {
namespace {

void check_shape(torch::IntArrayRef shape, const char* function) {
  if (shape.empty() || shape.back() < 1) fail(function, "shape must end in a dimension D >= 1");
  for (int64_t s : shape) {
    if (s < 0) fail(function, "negative size in shape");
  }
}

std::uint64_t word_le(const Sha256Digest& block, int index) {
  std::uint64_t w = 0;
  for (int i = 7; i >= 0; --i) w = (w << 8) | block[8 * index + i];
  return w;
}

}  // namespace

torch::Generator make_generator(std::uint64_t seed) {
  torch::Generator generator = at::detail::createCPUGenerator();
  generator.set_current_seed(seed);
  return generator;
}

torch::Tensor random(torch::IntArrayRef shape, torch::Generator& generator,
                     torch::TensorOptions options) {
  check_shape(shape, "hrr::random");
  const torch::ScalarType dtype = options.dtype().toScalarType();
  if (dtype != torch::kFloat32 && dtype != torch::kFloat64) {
    fail("hrr::random", "dtype must be float32 or float64");
  }
  torch::Tensor v = torch::randn(shape, generator, torch::TensorOptions().dtype(dtype));
  v.div_(std::sqrt(static_cast<double>(shape.back())));
  return v.to(options.device());
}

torch::Tensor random_unitary(torch::IntArrayRef shape, torch::Generator& generator,
                             torch::TensorOptions options) {
  return make_unitary(random(shape, generator, options));
}

torch::Tensor random_permutation(int64_t dim, torch::Generator& generator) {
  if (dim < 1) fail("hrr::random_permutation", "dim must be >= 1");
  return torch::randperm(dim, generator, torch::kInt64);
}

torch::Tensor named_vector(std::uint64_t seed, const std::string& name, int64_t dim, bool unitary,
                           torch::TensorOptions options) {
  if (dim < 1) fail("hrr::named_vector", "dim must be >= 1");
  const Sha256Digest key =
      Sha256().update("fieldbrain-hrr-vocabulary-v1").update_u64_le(seed).update(name).finish();

  std::vector<double> values(static_cast<std::size_t>(dim));
  const double two_pi = 2.0 * M_PI;
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
  std::uint64_t block_index = 0;
  Sha256Digest block{};
  int word = 4;  // words left unused in `block`; 4 forces the first block
  auto next_uniform = [&]() {
    if (word == 4) {
      block = Sha256().update(key.data(), key.size()).update_u64_le(block_index++).finish();
      word = 0;
    }
    const std::uint64_t w = word_le(block, word++);
    return (static_cast<double>(w >> 11) + 0.5) * 0x1p-53;
  };
  for (int64_t i = 0; i < dim; i += 2) {
    const double u1 = next_uniform();
    const double u2 = next_uniform();
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double angle = two_pi * u2;
    values[i] = radius * std::cos(angle) * scale;
    if (i + 1 < dim) values[i + 1] = radius * std::sin(angle) * scale;
  }
  torch::Tensor v = torch::tensor(values, torch::kFloat64);
  if (unitary) v = make_unitary(v);
  const torch::ScalarType dtype = options.dtype().toScalarType();
  if (dtype != torch::kFloat32 && dtype != torch::kFloat64) {
    fail("hrr::named_vector", "dtype must be float32 or float64");
  }
  return v.to(options.device(), dtype);
}

}  // namespace fieldbrain::hrr
