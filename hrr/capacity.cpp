#include "hrr/capacity.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "hrr/algebra.h"
#include "hrr/codebook_matmul.h"
#include "hrr/random_vectors.h"

namespace fieldbrain::hrr {
namespace {

// Bounds the [trials, k, M] score tensor of one chunk (~64 MB in float32).
constexpr int64_t kMaxScoresPerChunk = 16'000'000;

int64_t count_correct(const torch::Tensor& codebook, const torch::Tensor& prepared, int64_t pairs,
                      int64_t trials, const CapacityOptions& options, torch::Generator& generator) {
  const int64_t m = codebook.size(0);
  const torch::TensorOptions tensor_options =
      torch::TensorOptions().dtype(options.dtype).device(options.device);
  // Distinct fillers per trace: the first k of a random ordering of the M candidates.
  const torch::Tensor order = torch::rand({trials, m}, generator).argsort(/*dim=*/int64_t{-1});
  const torch::Tensor truth = order.narrow(-1, 0, pairs).to(options.device);  // [T, k]
  const torch::Tensor fillers =
      codebook.index_select(0, truth.reshape({-1})).view({trials, pairs, options.dim});
  const torch::Tensor roles =
      options.unitary_roles
          ? random_unitary({trials, pairs, options.dim}, generator, tensor_options)
          : random({trials, pairs, options.dim}, generator, tensor_options);
  const torch::Tensor trace = bind(roles, fillers).sum(-2, /*keepdim=*/true);  // [T, 1, D]
  const torch::Tensor retrieved = unbind(trace, roles);                        // [T, k, D]
  const torch::Tensor best = codebook_matmul(retrieved, codebook, prepared).argmax(-1);
  return best.eq(truth).sum().item<int64_t>();
}

}  // namespace

double CapacityPoint::standard_error() const {
  if (queries == 0) return 0.0;
  const double p = accuracy();
  return std::sqrt(p * (1.0 - p) / static_cast<double>(queries));
}

std::vector<CapacityPoint> measure_capacity(
    const CapacityOptions& options, const std::function<void(std::size_t, std::size_t)>& progress) {
  if (options.dim < 1 || options.candidates < 1 || options.trials < 1) {
    throw std::invalid_argument("measure_capacity: dim, candidates and trials must be >= 1");
  }
  torch::NoGradGuard no_grad;
  torch::Generator generator = make_generator(options.seed);
  const torch::Tensor codebook =
      normalize(random({options.candidates, options.dim}, generator,
                       torch::TensorOptions().dtype(options.dtype).device(options.device)));

  const torch::Tensor prepared = prepare_codebook(codebook);
  std::vector<CapacityPoint> curve;
  std::size_t done = 0;
  for (int64_t pairs : options.pair_counts) {
    ++done;
    if (pairs < 1 || pairs > options.candidates) continue;
    CapacityPoint point;
    point.pairs = pairs;
    const int64_t chunk = std::max<int64_t>(1, kMaxScoresPerChunk / (pairs * options.candidates));
    for (int64_t start = 0; start < options.trials; start += chunk) {
      const int64_t trials = std::min(chunk, options.trials - start);
      point.correct += count_correct(codebook, prepared, pairs, trials, options, generator);
      point.queries += trials * pairs;
    }
    curve.push_back(point);
    if (progress) progress(done, options.pair_counts.size());
  }
  return curve;
}

int64_t capacity_at(const std::vector<CapacityPoint>& curve, double target) {
  std::vector<CapacityPoint> sorted = curve;
  std::sort(sorted.begin(), sorted.end(),
            [](const CapacityPoint& a, const CapacityPoint& b) { return a.pairs < b.pairs; });
  int64_t best = 0;
  for (const CapacityPoint& point : sorted) {
    if (point.accuracy() < target) break;
    best = point.pairs;
  }
  return best;
}

double predicted_capacity_99(int64_t dim, int64_t candidates) {
  return static_cast<double>(dim) / (3.5 * std::log(static_cast<double>(candidates)) + 9.0);
}

double predicted_capacity_90(int64_t dim, int64_t candidates) {
  return static_cast<double>(dim) / (2.7 * std::log(static_cast<double>(candidates)) + 3.0);
}

}  // namespace fieldbrain::hrr
