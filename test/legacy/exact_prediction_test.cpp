// The legacy cycle's prediction, error and region-detection steps taken as loops over the
// tensors' memory (predictive_field.h, hierarchical_prediction.h, prediction_error_learning.h,
// topology_regions.h), each against the original's ATen expressions written out here as the
// port wrote them before: the same floats, bit for bit, over random inputs and edge cases.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cstring>
#include <random>

#include "brain/legacy/hierarchical_prediction.h"
#include "brain/legacy/prediction_error_learning.h"
#include "brain/legacy/predictive_field.h"
#include "brain/legacy/topology_regions.h"
#include "test/support/catch.h"
#include "test/support/test_seed.h"

// named, not anonymous: the suite is built as unity batches
namespace exact_prediction_test {

using namespace fieldbrain::legacy;
using torch::indexing::Slice;

bool same_tensor_bits(const torch::Tensor& a_in, const torch::Tensor& b_in) {
  const torch::Tensor a = a_in.contiguous(), b = b_in.contiguous();
  return a.sizes() == b.sizes() &&
         std::memcmp(a.data_ptr<float>(), b.data_ptr<float>(), a.numel() * sizeof(float)) == 0;
}

torch::Tensor normal_tensor(std::mt19937_64& rng, at::IntArrayRef sizes, float scale, float bias) {
  torch::Tensor t = torch::empty(sizes, torch::kFloat32);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  float* p = t.data_ptr<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = normal(rng) * scale + bias;
  return t;
}

// The port's ATen expression of process_hierarchical_errors' weight update and targets.
void reference_process_errors(std::array<torch::Tensor, 4>& weights,
                              std::deque<torch::Tensor>& history,
                              const HierarchicalPredictionResult& predicted,
                              const torch::Tensor& actual, const torch::Tensor& field,
                              std::vector<double>& magnitudes) {
  const std::array<double, 4> rates = {0.3, 0.1, 0.03, 0.01};
  history.push_back(actual.clone());
  if (history.size() > 1000) history.pop_front();
  const int64_t min_dim = std::min(actual.size(0), predicted.predictions[0].size(0));
  const std::size_t n = history.size();
  for (int k = 0; k < 4; ++k) {
    torch::Tensor target;
    if (k == 0) {
      target = actual;
    } else {
      const std::size_t window = k == 1 ? 10 : 100;
      if (n < window) continue;
      const auto first = k == 3 ? history.begin() : history.end() - static_cast<long>(window);
      target = torch::mean(torch::stack(std::vector<torch::Tensor>(first, history.end())), 0);
    }
    torch::Tensor error =
        target.index({Slice(0, min_dim)}) - predicted.predictions[k].index({Slice(0, min_dim)});
    magnitudes.push_back(torch::mean(torch::abs(error)).item<double>());
    torch::Tensor encoding = torch::mean(field.index({"...", Slice(16 * k, 16 * k + 16)}), {0, 1, 2});
    torch::Tensor grad = torch::outer(encoding, error.index({Slice(0, min_dim)}));
    weights[k].index({Slice(), Slice(0, min_dim)}) += grad * rates[k];
  }
}

}  // namespace exact_prediction_test

namespace ept = exact_prediction_test;

TEST_CASE("The combined hierarchical prediction's loop equals its ATen expression",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("combined prediction"));
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int64_t checked = 0, differing = 0;
  for (int64_t S : {1, 4, 12, 24, 31})
    for (int trial = 0; trial < 400; ++trial) {
      fieldbrain::legacy::HierarchicalPredictionResult p;
      for (int k = 0; k < 4; ++k) {
        p.predictions[k] = torch::tanh(ept::normal_tensor(rng, {S}, 1.5f, 0.0f));
        // some near-zero weights (the < 0.01 branch), some exact, some random
        p.confidences[k] = trial % 7 == 0 ? unit(rng) * 0.004 : trial % 5 == 0 ? 0.5 : unit(rng);
      }
      torch::Tensor want = ept::normal_tensor(rng, {S}, 0.3f, 0.0f);
      torch::Tensor got = want.clone();
      want.index({Slice(0, S)}) +=
          fieldbrain::legacy::HierarchicalPredictionImpl::combine(p).index({Slice(0, S)}) * 0.4;
      fieldbrain::legacy::add_combined_prediction(p, got.data_ptr<float>(), S);
      ++checked;
      if (!ept::same_tensor_bits(got, want)) ++differing;
    }
  INFO(checked << " predictions, " << differing << " differ");
  CHECK(differing == 0);
}

TEST_CASE("The momentum prediction's loop equals its ATen expression for two and three inputs",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("momentum prediction"));
  std::normal_distribution<double> normal(0.0, 2.0);
  int64_t checked = 0, differing = 0;
  for (int64_t S : {1, 5, 12, 24})
    for (std::size_t rows : {2, 3, 4, 10})
      for (int trial = 0; trial < 200; ++trial) {
        std::deque<std::vector<double>> recent;
        for (std::size_t r = 0; r < rows; ++r) {
          std::vector<double> v(static_cast<std::size_t>(S));
          for (double& x : v) x = trial % 9 == 0 ? std::round(normal(rng)) : normal(rng);
          recent.push_back(v);
        }
        torch::Tensor want = ept::normal_tensor(rng, {S}, 0.5f, 0.0f);
        torch::Tensor got = want.clone();
        fieldbrain::legacy::add_momentum_prediction_aten(recent, want);
        REQUIRE(fieldbrain::legacy::add_momentum_prediction(recent, got.data_ptr<float>(), S));
        ++checked;
        if (!ept::same_tensor_bits(got, want)) ++differing;
      }
  INFO(checked << " predictions, " << differing << " differ");
  CHECK(differing == 0);
  // a row of another length: the loop declines, nothing added
  std::deque<std::vector<double>> ragged = {{1.0, 2.0}, {1.0, 2.0, 3.0}};
  float untouched[3] = {0.25f, 0.5f, 0.75f};
  CHECK_FALSE(fieldbrain::legacy::add_momentum_prediction(ragged, untouched, 3));
  CHECK(untouched[0] == 0.25f);
}

TEST_CASE("The hierarchy's error learning loops equal its ATen expressions over 1,100 cycles",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("hierarchical errors"));
  for (int64_t S : {12, 24}) {
    at::Generator gen = at::detail::createCPUGenerator(7);
    fieldbrain::legacy::HierarchicalPrediction h(
        fieldbrain::legacy::HierarchicalPredictionOptions({6, 6, 6, 64}, S), gen);
    std::array<torch::Tensor, 4> weights;
    for (int k = 0; k < 4; ++k) weights[k] = h->weights()[k].clone();
    std::deque<torch::Tensor> history;
    int64_t weight_mismatch = 0, blob_mismatch = 0;
    for (int cycle = 0; cycle < 1100; ++cycle) {
      const torch::Tensor field = ept::normal_tensor(rng, {6, 6, 6, 64}, 0.4f, 0.05f);
      const torch::Tensor actual = ept::normal_tensor(rng, {S}, 0.6f, 0.1f);
      fieldbrain::legacy::HierarchicalPredictionResult predicted;
      for (int k = 0; k < 4; ++k)
        predicted.predictions[k] = torch::tanh(ept::normal_tensor(rng, {S}, 1.0f, 0.0f));
      const std::vector<fieldbrain::legacy::FieldBlobWrite> writes =
          h->process_errors(predicted, actual, field);
      std::vector<double> magnitudes;
      ept::reference_process_errors(weights, history, predicted, actual, field, magnitudes);
      for (int k = 0; k < 4; ++k)
        if (!ept::same_tensor_bits(h->weights()[k], weights[k])) ++weight_mismatch;
      // each level whose error passes 0.01 writes min(S, 16) blobs of target * (0.5 + |error|)
      std::size_t w = 0;
      for (double m : magnitudes) {
        if (!(m > 0.01)) continue;
        for (int64_t i = 0; i < std::min<int64_t>(S, 16); ++i, ++w) {
          const int64_t spread = std::max<int64_t>(1, std::min<int64_t>(3, int64_t(m * 10)));
          if (w >= writes.size() || writes[w].z1 - writes[w].z0 != std::min<int64_t>(6, 3 + spread + 1) - std::max<int64_t>(0, 3 - spread))
            ++blob_mismatch;
        }
      }
      if (w != writes.size()) ++blob_mismatch;
    }
    INFO("S " << S << ": " << weight_mismatch << " weight mismatches, " << blob_mismatch
              << " blob mismatches");
    CHECK(weight_mismatch == 0);
    CHECK(blob_mismatch == 0);
  }
}

TEST_CASE("The error field's region boxes and mean equal the ATen add_ and sub_ on the field",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("error field"));
  std::uniform_int_distribution<int64_t> coord(0, 7);
  const int64_t S = 24;
  fieldbrain::legacy::PredictionErrorLearning learning({8, 8, 8, 64});
  int64_t differing = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<fieldbrain::legacy::TopologyRegion> regions(static_cast<std::size_t>(trial % 9 + 1));
    for (std::size_t r = 0; r < regions.size(); ++r) {
      auto& region = regions[r];
      region.center = {coord(rng), coord(rng), coord(rng)};
      region.is_sensory_predictive = r % 4 != 3;
      for (int64_t s = 0; s < 4; ++s) region.sensor_indices.push_back((int64_t(r) * 5 + s) % (S + 2));
    }
    std::vector<const fieldbrain::legacy::TopologyRegion*> ptrs;
    for (const auto& r : regions) ptrs.push_back(&r);
    // errors small and large: both the sharpening (> 0.1) and the consolidation branch
    const torch::Tensor e = ept::normal_tensor(rng, {S}, trial % 2 == 0 ? 0.05f : 0.6f, 0.0f);
    const auto got = learning.error_to_field(e, ptrs);
    torch::Tensor want = torch::zeros({8, 8, 8, 64}, torch::kFloat32);
    for (const auto& region : regions) {
      if (!region.is_sensory_predictive) continue;
      std::vector<double> errs;
      for (int64_t s : region.sensor_indices)
        if (s < S) errs.push_back(static_cast<double>(e[s].item<float>()));
      if (errs.empty()) continue;
      double avg = 0.0;  // numpy's mean of a short list: pairwise = in order below 8 values
      for (double v : errs) avg += v;
      avg /= static_cast<double>(errs.size());
      const auto [x, y, z] = region.center;
      const int64_t sp = avg > 0.1 ? 1 : 2;
      torch::Tensor box = want.index({Slice(std::max<int64_t>(0, x - sp), std::min<int64_t>(8, x + sp + 1)),
                                      Slice(std::max<int64_t>(0, y - sp), std::min<int64_t>(8, y + sp + 1)),
                                      Slice(std::max<int64_t>(0, z - sp), std::min<int64_t>(8, z + sp + 1)),
                                      Slice()});
      if (avg > 0.1)
        box.add_(std::min(1.0, avg * 2.0));
      else
        box.sub_(0.1 * (1.0 - avg));
    }
    want.add_(torch::mean(torch::abs(e)).item<double>() * 0.05);
    if (!ept::same_tensor_bits(got.field, want)) ++differing;
    if (got.mean_abs != torch::abs(want).mean().item<double>()) ++differing;
  }
  INFO(differing << " of 60 error fields differ");
  CHECK(differing == 0);
}

TEST_CASE("The salient points' loops equal the ATen means, threshold and nonzero or topk",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("salient points"));
  fieldbrain::legacy::TopologyRegionSystem topology({10, 10, 10, 64}, 0.05, 200);
  int64_t differing = 0, topk_cases = 0;
  for (int trial = 0; trial < 80; ++trial) {
    // a few bright spots on a quiet field, a uniform-ish field, and a field below 0.01 (topk)
    const float scale = trial % 4 == 3 ? 0.004f : 0.3f;
    torch::Tensor field = ept::normal_tensor(rng, {10, 10, 10, 64}, scale, 0.0f);
    if (trial % 4 == 1)
      for (int s = 0; s < 6; ++s)
        field.index({int64_t(rng() % 10), int64_t(rng() % 10), int64_t(rng() % 10)}).mul_(8.0);
    const auto got = topology.salient_points(field);
    // the port's ATen expression
    torch::Tensor field_abs = torch::abs(field);
    const double mean_activation = torch::mean(field_abs).item<double>();
    const double threshold = std::max(0.01, mean_activation * 0.8);
    torch::Tensor field_mean = field_abs.mean(3);
    torch::Tensor above = field_mean > threshold;
    std::vector<std::array<int64_t, 3>> want;
    if (torch::sum(above).item<int64_t>() == 0) {
      ++topk_cases;
      torch::Tensor idx = std::get<1>(torch::topk(field_mean.flatten(), 5));
      for (int64_t i = 0; i < 5; ++i) {
        const int64_t f = idx[i].item<int64_t>();
        want.push_back({f / 100, (f / 10) % 10, f % 10});
      }
    } else {
      torch::Tensor nz = torch::nonzero(above);
      for (int64_t i = 0; i < std::min<int64_t>(10, nz.size(0)); ++i)
        want.push_back({nz[i][0].item<int64_t>(), nz[i][1].item<int64_t>(), nz[i][2].item<int64_t>()});
    }
    if (got != want) ++differing;
  }
  INFO(differing << " of 80 fields differ; " << topk_cases << " took the topk path");
  CHECK(topk_cases > 0);
  CHECK(differing == 0);
}
