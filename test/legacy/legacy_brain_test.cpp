// The legacy profile against the pinned original's recorded runs (test/fixtures/legacy/, made by
// scripts/legacy/run_original.py): construction bit for bit, every cycle's motors, confidence
// and region counts equal, save/load continuing exactly, bad input refused.
// The per-cycle scenarios are compared with the set the original recorded under the same
// LibTorch release (torch 1.13: the main set; torch 2.6: torch-2.6/), and skipped elsewhere.
#include "brain/legacy/legacy_brain.h"

#include <ATen/Parallel.h>
#include <unistd.h>

#include <algorithm>
#include "test/support/catch.h"
#include "test/support/skip.h"
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "brain/legacy/legacy_cycle.h"
#include "app/fieldbrain/legacy_fixture.h"

namespace {

using fieldbrain::legacy::LegacyBrain;
using fieldbrain::legacy::LegacyOptions;

// Equality: against the set the original recorded under this LibTorch release the port is bit
// for bit (docs/legacy.md "How close it is": worst motor and confidence difference 0 in every
// scenario, under 1.13, 2.6 and 2.14). Any difference is a change of the port's arithmetic.
constexpr double kMotorTolerance = 0.0;
constexpr double kConfidenceTolerance = 0.0;

std::string fixtures_dir() {
  if (const char* env = std::getenv("FIELDBRAIN_LEGACY_FIXTURES")) return env;
  return fieldbrain::legacy::legacy_fixture_root();
}

// The per-cycle scenarios recorded by the original under this LibTorch release
// (legacy_cycle_fixture_root), or "" when there are none (*why says why): the original's own
// numbers differ between releases, so a set recorded under another one cannot judge the port.
std::string scenario_dir(std::string* why) {
  if (const char* env = std::getenv("FIELDBRAIN_LEGACY_FIXTURES")) return env;
  std::string recorded;
  const std::string dir = fieldbrain::legacy::legacy_cycle_fixture_root(&recorded);
  if (dir.empty()) *why = fieldbrain::legacy::legacy_cycle_fixture_missing(recorded);
  return dir;
}

LegacyOptions options_of(const nlohmann::json& meta) {
  LegacyOptions o;
  o.resolution = meta.at("R").get<int64_t>();
  o.sensory_dim = meta.at("S").get<int64_t>();
  o.motor_dim = meta.at("M").get<int64_t>();
  o.seed = meta.at("seed").get<uint64_t>();
  return o;
}

std::vector<double> row(const torch::Tensor& inputs, int64_t n) {
  torch::Tensor r = inputs[n].contiguous();
  return std::vector<double>(r.data_ptr<double>(), r.data_ptr<double>() + r.numel());
}

double clock_of(const nlohmann::json& meta, int64_t n) {
  return meta.at("t0").get<double>() + static_cast<double>(n) * meta.at("dt").get<double>();
}

struct Replay {
  double worst_motor = 0.0;
  int64_t worst_cycle = -1;
  int64_t first_confidence_mismatch = -1, first_region_mismatch = -1;
  double worst_confidence = 0.0;
};

// Runs cycles [from, to) of the fixture on `brain`, comparing every cycle.
Replay replay(LegacyBrain& brain, const fieldbrain::legacy::LegacyFixture& fx, int64_t from,
              int64_t to) {
  Replay r;
  auto motors = fx.motors.accessor<double, 2>();
  auto conf = fx.confidence.accessor<double, 1>();
  auto regions = fx.regions.accessor<int64_t, 1>();
  for (int64_t n = from; n < to; ++n) {
    std::vector<double> m = brain->step(row(fx.inputs, n), clock_of(fx.meta, n));
    for (std::size_t k = 0; k < m.size(); ++k) {
      const double d = std::abs(m[k] - motors[n][static_cast<int64_t>(k)]);
      if (d > r.worst_motor || r.worst_cycle < 0) {
        if (d > r.worst_motor) r.worst_motor = d;
        if (d >= r.worst_motor) r.worst_cycle = n;
      }
    }
    const auto& c = brain->cycle_state();
    const double dc = std::abs(c.prediction_confidence() - conf[n]);
    r.worst_confidence = std::max(r.worst_confidence, dc);
    if (dc > kConfidenceTolerance && r.first_confidence_mismatch < 0) {
      r.first_confidence_mismatch = n;
    }
    if (c.region_count() != regions[n] && r.first_region_mismatch < 0) r.first_region_mismatch = n;
  }
  return r;
}

// The committed scenarios of brain/legacy/LEGACY.md that are present.
std::vector<std::string> scenario_names() {
  std::vector<std::string> out;
  for (const auto& name : fieldbrain::legacy::legacy_scenarios())
    if (std::filesystem::exists(fixtures_dir() + "/" + name + "/motors.npy")) out.push_back(name);
  return out;
}

// One scenario, every cycle: motors, confidence and region counts equal; prints the
// worst motor difference, its cycle and the port's time per cycle.
void check_scenario(const std::string& name) {
  at::set_num_threads(1);
  std::string why;
  const std::string root = scenario_dir(&why);
  if (root.empty()) FIELDBRAIN_SKIP(why);
  const std::string dir = root + "/" + name;
  REQUIRE(std::filesystem::exists(dir + "/motors.npy"));
  auto fx = fieldbrain::legacy::load_legacy_fixture(dir);
  LegacyBrain brain(options_of(fx.meta));
  const int64_t n = fx.inputs.size(0);
  const auto t0 = std::chrono::steady_clock::now();
  Replay r = replay(brain, fx, 0, n);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "legacy parity %-26s cycles %4lld  worst motor diff %.3g at cycle %lld  worst confidence "
      "diff %.3g  confidence/regions equal: %s/%s  %.2f ms/cycle\n",
      name.c_str(), static_cast<long long>(n), r.worst_motor, static_cast<long long>(r.worst_cycle),
      r.worst_confidence, r.first_confidence_mismatch < 0 ? "yes" : "no",
      r.first_region_mismatch < 0 ? "yes" : "no", ms / static_cast<double>(n));
  INFO(name << ": first confidence mismatch " << r.first_confidence_mismatch
            << ", first region-count mismatch " << r.first_region_mismatch);
  CHECK(r.worst_motor <= kMotorTolerance);
  CHECK(r.first_confidence_mismatch == -1);
  CHECK(r.first_region_mismatch == -1);
}

}  // namespace

TEST_CASE("The legacy brain's construction draws equal the original's bit for bit",
          "[parity][legacy]") {
  at::set_num_threads(1);
  const std::string dir = fixtures_dir() + "/r16_s24m4_construction";
  auto fx = fieldbrain::legacy::load_legacy_fixture(dir);
  LegacyBrain brain(options_of(fx.meta));
  const auto& cycle = brain->cycle_state();
  CHECK(cycle.dynamics()->wave_vectors().size(0) == fx.meta.at("n_waves").get<int64_t>());
  CHECK(torch::equal(brain->field(), fieldbrain::legacy::read_npy(dir + "/field.npy")));
  const auto& w = cycle.predictive().hierarchy()->weights();
  const char* names[4] = {"immediate", "short_term", "long_term", "abstract"};
  for (int k = 0; k < 4; ++k) {
    INFO(names[k]);
    CHECK(torch::equal(w[k], fieldbrain::legacy::read_npy(dir + "/" + names[k] + "_weights.npy")));
  }
}

TEST_CASE("R16 S24 M4 smooth input matches the original cycle by cycle", "[parity][legacy]") {
  check_scenario("r16_s24m4_smooth");
}
TEST_CASE("R16 S24 M4 random input with rewards matches the original cycle by cycle",
          "[parity][legacy]") {
  check_scenario("r16_s24m4_random_reward");
}
TEST_CASE("R16 S24 M4 negative input with rewards matches the original cycle by cycle",
          "[parity][legacy]") {
  check_scenario("r16_s24m4_negative_reward");
}
TEST_CASE("R16 S12 M6 smooth input with rewards matches the original cycle by cycle",
          "[parity][legacy]") {
  check_scenario("r16_s12m6_smooth_reward");
}
TEST_CASE("R16 S12 M6 random input matches the original cycle by cycle", "[parity][legacy]") {
  check_scenario("r16_s12m6_random");
}
TEST_CASE("R16 S12 M6 negative input matches the original cycle by cycle", "[parity][legacy]") {
  check_scenario("r16_s12m6_negative");
}
TEST_CASE("R32 S24 M4 smooth input with rewards matches the original for 300 cycles",
          "[parity][legacy]") {
  check_scenario("r32_s24m4_smooth_reward");
}

TEST_CASE("A legacy brain saved mid-run and loaded into a fresh one continues exactly",
          "[parity][legacy]") {
  at::set_num_threads(1);
  const auto names = scenario_names();
  REQUIRE(!names.empty());
  // a scenario with rewards exercises the attractors
  std::string name = names.front();
  for (const auto& n : names)
    if (n.find("reward") != std::string::npos && n.rfind("r16", 0) == 0) name = n;
  auto fx = fieldbrain::legacy::load_legacy_fixture(fixtures_dir() + "/" + name);
  const int64_t total = std::min<int64_t>(fx.inputs.size(0), 40), cut = 23;
  LegacyBrain a(options_of(fx.meta));
  for (int64_t n = 0; n < cut; ++n) a->step(row(fx.inputs, n), clock_of(fx.meta, n));
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("legacy_save_" + std::to_string(::getpid()) + ".fbrain"))
                               .string();
  a->save(path);
  LegacyOptions other = options_of(fx.meta);
  other.seed = 7;  // the archive's seed and generator state replace it
  LegacyBrain b(other);
  b->load(path);
  std::filesystem::remove(path);
  REQUIRE(b->cycle() == cut);
  REQUIRE(torch::equal(a->field(), b->field()));
  for (int64_t n = cut; n < total; ++n) {
    const auto ma = a->step(row(fx.inputs, n), clock_of(fx.meta, n));
    const auto mb = b->step(row(fx.inputs, n), clock_of(fx.meta, n));
    INFO("cycle " << n);
    REQUIRE(ma == mb);
    REQUIRE(torch::equal(a->field(), b->field()));
    REQUIRE(a->cycle_state().prediction_confidence() == b->cycle_state().prediction_confidence());
  }
}

TEST_CASE("The legacy brain refuses bad input and leaves its state untouched", "[legacy]") {
  at::set_num_threads(1);
  LegacyOptions o;
  o.resolution = 8;
  o.sensory_dim = 6;
  o.motor_dim = 4;
  LegacyBrain brain(o);
  brain->step(std::vector<double>(6, 0.2), 1000.0);
  const torch::Tensor before = brain->field().clone();
  const int64_t cycle = brain->cycle();
  SECTION("wrong length") {
    CHECK_THROWS_AS(brain->step(std::vector<double>(5, 0.1), 1000.05), std::invalid_argument);
    CHECK_THROWS_AS(brain->step(std::vector<double>(8, 0.1), 1000.05), std::invalid_argument);
    // S+1 (a reward) is a valid length, but not after inputs of length S
    CHECK_THROWS_AS(brain->step(std::vector<double>(7, 0.1), 1000.05), std::invalid_argument);
  }
  SECTION("NaN, infinity, out of range") {
    std::vector<double> v(6, 0.1);
    v[2] = std::nan("");
    CHECK_THROWS_AS(brain->step(v, 1000.05), std::invalid_argument);
    v[2] = INFINITY;
    CHECK_THROWS_AS(brain->step(v, 1000.05), std::invalid_argument);
    v[2] = 10.5;
    CHECK_THROWS_AS(brain->step(v, 1000.05), std::invalid_argument);
  }
  SECTION("a corrupt archive") {
    const std::string path =
        (std::filesystem::temp_directory_path() / ("legacy_bad_" + std::to_string(::getpid())))
            .string();
    {
      std::FILE* f = std::fopen(path.c_str(), "wb");
      std::fputs("not an archive", f);
      std::fclose(f);
    }
    CHECK_THROWS_AS(brain->load(path), std::runtime_error);
    std::filesystem::remove(path);
  }
  CHECK(brain->cycle() == cycle);
  CHECK(torch::equal(brain->field(), before));
  // and it still runs
  CHECK(brain->step(std::vector<double>(6, 0.3), 1000.05).size() == 4);
}
