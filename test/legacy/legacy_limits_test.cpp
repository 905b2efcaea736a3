// The legacy profile's numeric limits (issue 36; docs/operating.md "Limits"): every input the
// original accepts (its validate_list_input: finite, within [-10, 10]) is taken unchanged and,
// drawn at random down to subnormals and signed zeros, keeps the brain's field, motors and
// save finite; a save that holds NaN is refused on load naming the tensor, the brain untouched.
#include "test/support/catch.h"

#include <ATen/Parallel.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "brain/legacy/legacy_brain.h"
#include "brain/persistence.h"
#include "test/support/forged_archive.h"
#include "test/support/test_seed.h"

using fieldbrain::legacy::LegacyBrain;
using fieldbrain::legacy::LegacyOptions;

namespace {

LegacyOptions small_options() {
  LegacyOptions o;
  o.resolution = 8;
  o.sensory_dim = 4;
  o.motor_dim = 2;
  o.seed = 11;
  return o;
}

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("fieldbrain-legacy-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

// A value the original accepts: log-uniform magnitude from the smallest subnormal double up to
// 10, either sign, with signed zeros, float subnormals and +-10 now and then.
double random_accepted(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> kind(0, 9);
  std::uniform_real_distribution<double> exponent(-320.0, 1.0);
  const double sign = (rng() & 1) ? -1.0 : 1.0;
  switch (kind(rng)) {
    case 0: return sign * 0.0;
    case 1: return sign * 10.0;
    case 2: return sign * static_cast<double>(std::numeric_limits<float>::denorm_min());
    default: return sign * std::pow(10.0, exponent(rng));
  }
}

}  // namespace

TEST_CASE("Random extremes the original accepts keep the legacy brain's field, motors and save "
          "finite", "[legacy][limits][property]") {
  at::set_num_threads(1);
  const uint64_t seed = fieldbrain::test::test_seed("finite extremes (legacy)");
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  LegacyBrain brain(small_options());
  for (int cycle = 0; cycle < 30; ++cycle) {
    std::vector<double> input(4);
    for (double& v : input) v = random_accepted(rng);
    INFO("cycle " << cycle << ": " << input[0] << " " << input[1] << " " << input[2] << " "
                  << input[3]);
    const std::vector<double> motors = brain->step(input, 1000.0 + 0.05 * cycle);
    REQUIRE(motors.size() == 2);
    for (double m : motors) REQUIRE(std::isfinite(m));
    REQUIRE(torch::isfinite(brain->field()).all().item<bool>());
  }
  const std::string path = temp_file("extremes.pt");
  REQUIRE_NOTHROW(brain->save(path));  // save_archive refuses a non-finite state
  std::remove(path.c_str());
}

TEST_CASE("The legacy brain refuses a save that holds NaN, naming the tensor, and stays as it was",
          "[legacy][limits]") {
  at::set_num_threads(1);
  LegacyBrain brain(small_options());
  for (int cycle = 0; cycle < 3; ++cycle) brain->step(std::vector<double>(4, 0.3), 1000.0 + cycle);
  const std::string path = temp_file("poisoned.pt");
  brain->save(path);
  std::string victim;
  for (const auto& [name, t] : fieldbrain::load_archive(path).tensors) {
    if (t.is_floating_point() && t.numel() > 0) {
      victim = name;
      break;
    }
  }
  REQUIRE(!victim.empty());
  fieldbrain::test::poison_archive(path, victim);
  LegacyBrain other(small_options());
  const torch::Tensor before = other->field().clone();
  CHECK_THROWS_WITH(other->load(path), Catch::Contains("NaN or Inf") && Catch::Contains(victim));
  CHECK(other->cycle() == 0);
  CHECK(torch::equal(other->field(), before));
  std::remove(path.c_str());
}
