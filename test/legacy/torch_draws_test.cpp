// LibTorch's CPU generator, seeded as torch.manual_seed(s) seeds Python's, reproduces bit for bit
// the draws the original field brain makes (test/fixtures/legacy/README.md, "Notes for the port" 3): the construction draws
// of the pinned original (r16_s24m4_construction, from em-brain itself) and its cycle-0 draws,
// and Python torch's draw sequences over several cycles (torch_draws/, made by
// scripts/legacy/make_draws_fixture.py). The per-element path of tensors with fewer than 16
// values keeps a spare normal inside the generator between calls; these sequences cross it.
// ATen's CPU capability changes the vectorised normal stream, so a test whose fixture was made
// under another capability is skipped (test/support/skip.h) (see test/fixtures/legacy/README.md).
#include "test/support/catch.h"
#include "test/support/cpu_kernels.h"
#include "test/support/skip.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Version.h>

#include <cmath>
#include <fstream>
#include <string>

#include "brain/legacy/numpy_random.h"
#include "app/fieldbrain/legacy_fixture.h"

using fieldbrain::legacy::legacy_fixture_root;
using fieldbrain::legacy::read_npy;

namespace {

std::string capability() { return fieldbrain::test::aten_cpu_capability(); }

// Why a fixture made under `fixture_capability` cannot judge this process's draws, or "" when
// it can (the same ATen CPU capability).
std::string capability_mismatch(const std::string& fixture_capability) {
  if (capability() == fixture_capability) return "";
  return "ATen CPU capability " + capability() + ", the fixture was made with " +
         fixture_capability + " (ATEN_CPU_CAPABILITY=" +
         fieldbrain::test::lower_case(fixture_capability) + " runs it here)";
}

at::Generator seeded(uint64_t seed) { return at::make_generator<at::CPUGeneratorImpl>(seed); }

torch::Tensor randn(at::IntArrayRef shape, at::Generator& gen) {
  return at::randn(shape, gen, torch::kFloat32);
}
// torch.randn_like(x) is empty_like(x).normal_(): a fresh contiguous tensor of x's shape.
torch::Tensor randn_like(at::IntArrayRef shape, at::Generator& gen) {
  return torch::empty(shape, torch::kFloat32).normal_(0.0, 1.0, gen);
}
// torch.nn.init.xavier_uniform_(w, gain) for w [fan_out, fan_in], with the same double bound.
torch::Tensor xavier_uniform(int64_t fan_out, int64_t fan_in, double gain, at::Generator& gen) {
  const double std = gain * std::sqrt(2.0 / double(fan_in + fan_out));
  const double a = std::sqrt(3.0) * std;
  return torch::empty({fan_out, fan_in}, torch::kFloat32).uniform_(-a, a, gen);
}

// Bit-for-bit equality, with the first differing index in the failure message.
void require_same_bits(const torch::Tensor& got, const torch::Tensor& want,
                       const std::string& what) {
  INFO(what);
  REQUIRE(got.sizes() == want.sizes());
  REQUIRE(got.scalar_type() == want.scalar_type());
  const torch::Tensor diff = (got.reshape(-1) != want.reshape(-1)).nonzero();
  if (diff.size(0) > 0) {
    const int64_t i = diff[0][0].item<int64_t>();
    FAIL(diff.size(0) << " of " << got.numel() << " values differ; first at flat index " << i
                      << ": " << got.reshape(-1)[i].item<double>() << " vs "
                      << want.reshape(-1)[i].item<double>());
  }
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("LibTorch reproduces the pinned original's construction draws bit for bit", "[legacy]") {
  const auto f =
      fieldbrain::legacy::load_legacy_fixture(legacy_fixture_root() + "/r16_s24m4_construction");
  const std::string mismatch = capability_mismatch(f.meta.at("cpu_capability").get<std::string>());
  if (!mismatch.empty()) FIELDBRAIN_SKIP(mismatch);
  const int64_t R = f.meta.at("R"), S = f.meta.at("S"), seed = f.meta.at("seed");
  const torch::Tensor field = read_npy(f.dir + "/field.npy");
  REQUIRE(field.sizes() == c10::IntArrayRef({R, R, R, 64}));
  at::Generator gen = seeded(uint64_t(seed));

  // UnifiedFieldBrain: create_randn(shape, scale=0.2, bias=0.05) -> randn * 0.2 + 0.05
  const torch::Tensor drawn = randn({R, R, R, 64}, gen) * 0.2 + 0.05;
  require_same_bits(drawn.slice(3, 0, 48), field.slice(3, 0, 48), "field channels 0-47");

  // EvolvedFieldDynamics._initialize_wave_vectors: numpy's randint(3, 6), then randn [n, 3]
  fieldbrain::legacy::NumpyRandomState np_state{uint32_t(seed)};
  const int64_t n_waves = np_state.randint(3, 6);
  REQUIRE(n_waves == f.meta.at("n_waves").get<int64_t>());
  const torch::Tensor waves = randn({n_waves, 3}, gen);
  require_same_bits(waves, read_npy(f.dir + "/wave_vectors_drawn.npy"), "wave_vectors (drawn)");
  const torch::Tensor normalised = waves / (waves.norm(2, 1, true) + 1e-8);
  CHECK(torch::allclose(normalised, read_npy(f.dir + "/wave_vectors.npy"), 1e-6, 1e-7));

  // initialize_field_dynamics: decay, diffusion, coupling, plasticity logits, in that order
  const double scale[4] = {0.1, 0.05, 0.05, 0.2}, bias[4] = {2.0, 0.0, 0.0, 0.0};
  for (int k = 0; k < 4; ++k) {
    torch::Tensor d = randn_like({R, R, R, 4}, gen) * scale[k];
    if (bias[k] != 0.0) d = d + bias[k];
    require_same_bits(d, field.slice(3, 48 + 4 * k, 52 + 4 * k).contiguous(),
                      "dynamics channels " + std::to_string(48 + 4 * k));
  }

  // HierarchicalPredictionSystem: xavier_uniform_ with gains 1, .5, .3, .2
  const char* names[4] = {"immediate_weights", "short_term_weights", "long_term_weights",
                          "abstract_weights"};
  const double gains[4] = {1.0, 0.5, 0.3, 0.2};
  for (int k = 0; k < 4; ++k) {
    require_same_bits(xavier_uniform(16, S, gains[k], gen),
                      read_npy(f.dir + "/" + names[k] + ".npy"), names[k]);
  }

  // Cycle 0 (the fixture's one input): the draws as the script recorded them
  const auto& draws = f.meta.at("cycle0_draws");
  REQUIRE(draws.size() >= 2);
  for (const auto& d : draws) {
    const auto shape = d.at("shape").get<std::vector<int64_t>>();
    const std::string op = d.at("op");
    const torch::Tensor got = op == "randn_like" ? randn_like(shape, gen) : randn(shape, gen);
    REQUIRE((op == "randn" || op == "randn_like"));
    const torch::Tensor want = read_npy(f.dir + "/" + d.at("file").get<std::string>());
    require_same_bits(got.reshape(-1).slice(0, 0, want.numel()), want,
                      "cycle 0 " + op + " " + c10::str(c10::IntArrayRef(shape)));
  }
}

TEST_CASE("LibTorch reproduces Python torch's draw sequence of the original over several cycles",
          "[legacy]") {
  const std::string dir = legacy_fixture_root() + "/torch_draws";
  const nlohmann::json cases = read_json(dir + "/cases.json");
  const std::string mismatch = capability_mismatch(cases.at("cpu_capability").get<std::string>());
  if (!mismatch.empty()) FIELDBRAIN_SKIP(mismatch);
  REQUIRE(cases.at("cases").size() >= 4);
  for (const auto& c : cases.at("cases")) {
    const int64_t R = c.at("R"), S = c.at("S"), M = c.at("M"), n_waves = c.at("n_waves");
    INFO("seed " << c.at("seed") << " R " << R << " S " << S << " M " << M << " n_waves "
                 << n_waves);
    at::Generator gen = seeded(c.at("seed").get<uint64_t>());
    std::vector<torch::Tensor> parts = {randn({R, R, R, 64}, gen), randn({n_waves, 3}, gen)};
    for (int k = 0; k < 4; ++k) parts.push_back(randn_like({R, R, R, 4}, gen));
    for (double gain : {1.0, 0.5, 0.3, 0.2}) parts.push_back(xavier_uniform(16, S, gain, gen));
    for (bool empty : c.at("empty").get<std::vector<bool>>()) {
      if (empty) parts.push_back(randn_like({R, R, R}, gen));
      parts.push_back(randn({R, R, R, 48}, gen));
      for (int64_t i = 4; i < M; ++i) parts.push_back(randn({1}, gen));
      parts.push_back(randn({M}, gen));
    }
    std::vector<torch::Tensor> flat;
    for (const auto& p : parts) flat.push_back(p.reshape(-1));
    const torch::Tensor want = read_npy(dir + "/" + c.at("file").get<std::string>());
    require_same_bits(torch::cat(flat), want, c.at("file").get<std::string>());
  }
}

TEST_CASE("a spare normal left by a small odd draw changes the next small draw", "[legacy]") {
  // Why the draw order must include every small draw: with 9 values (n_waves 3) drawn, the
  // 10th normal of the pair waits in the generator and opens the next small draw.
  at::Generator a = seeded(42), b = seeded(42);
  (void)randn({3, 3}, a);
  (void)randn({3, 4}, b);
  CHECK_FALSE(torch::equal(randn({4}, a), randn({4}, b)));
}
