// What a sensor value may be, and what happens when a brain's state stops being finite
// (issue 36; docs/operating.md "Limits", "A brain that stops being finite"): values beyond
// +-kMaxInputMagnitude are refused before anything changes, random finite extremes within it
// keep the field, the motors and the saves finite on both cycles, and a robot whose field is
// no longer finite gets NaN motors in that very cycle through the one copy the cycle makes.
#include "test/support/catch.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "brain/field_brain.h"
#include "brain/host_input.h"
#include "brain/persistence.h"
#include "brain/sync_counter.h"
#include "test/brain/brain_state.h"
#include "test/support/random_extremes.h"
#include "test/support/test_seed.h"

namespace fieldbrain::test {
namespace {

BrainConfig config_for(const char* field_step) {
  BrainConfig c = small_config(8, 4, 2);
  c.field_step = field_step;
  return c;
}

bool all_finite(const torch::Tensor& t) { return torch::isfinite(t).all().item<bool>(); }

}  // namespace

TEST_CASE("A sensor value or reward beyond the input bound is refused before anything changes",
          "[brain][limits]") {
  for (const char* step : {"fast", "reference"}) {
    INFO("field_step " << step);
    auto brain = make_brain(config_for(step), {1});
    brain->step(test_sensors(0, {1}, 4), test_reward(0, {1}));
    const auto before = snapshot(*brain);
    const float over = std::nextafter(kMaxInputMagnitude, std::numeric_limits<float>::infinity());
    for (const float bad : {1e20f, -3e38f, over, -over}) {
      auto s = torch::zeros({1, 4});
      s[0][2] = bad;
      CHECK_THROWS_WITH(brain->step(s, torch::zeros({1})),
                        Catch::Contains("sensors[0][2]") &&
                            Catch::Contains("is outside"));
      CHECK_THROWS_WITH(brain->step(torch::zeros({1, 4}), torch::full({1}, bad)),
                        Catch::Contains("reward[0]"));
    }
    CHECK(first_difference(before, snapshot(*brain)).empty());
    // The bound itself is an input like any other.
    auto s = torch::full({1, 4}, kMaxInputMagnitude);
    CHECK_NOTHROW(brain->step(s, torch::full({1}, -kMaxInputMagnitude)));
  }
}

TEST_CASE("Random finite extremes within the bound keep field, motors and saves finite",
          "[brain][limits][property]") {
  const uint64_t seed = test_seed("finite extremes (brain)");
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  for (const char* step : {"fast", "reference"}) {
    INFO("field_step " << step);
    auto brain = make_brain(config_for(step), {1, 2});
    for (int cycle = 0; cycle < 40; ++cycle) {
      auto s = torch::empty({2, 4});
      auto r = torch::empty({2});
      const float limit = kMaxInputMagnitude;
      for (int i = 0; i < 8; ++i) s.view({-1})[i] = random_finite_extreme(rng, limit);
      for (int i = 0; i < 2; ++i) r[i] = random_finite_extreme(rng, limit);
      INFO("cycle " << cycle << " sensors " << s << " reward " << r);
      const auto m = brain->step(s, r);
      REQUIRE(all_finite(m));
      REQUIRE(all_finite(brain->field()));
    }
    for (const auto& [name, tensor] : snapshot(*brain)) {
      INFO("buffer " << name);
      if (tensor.is_floating_point()) CHECK(all_finite(tensor));
    }
    const std::string path = temp_path(std::string("extremes-") + step + ".pt");
    REQUIRE_NOTHROW(brain->save(path));  // save_archive would refuse a non-finite state
    std::remove(path.c_str());
  }
}

TEST_CASE("Inputs held at the bound keep every buffer finite for hundreds of cycles",
          "[brain][limits]") {
  // Held at 100 (ten times the bound) the smoothed information overflows within ~80 cycles at
  // R = 8 (docs/operating.md "What a sensor value may be"); at the bound it stays small.
  for (const char* step : {"fast", "reference"}) {
    INFO("field_step " << step);
    auto brain = make_brain(config_for(step), {1});
    for (int cycle = 0; cycle < 200; ++cycle) {
      const float v = cycle % 50 < 25 ? kMaxInputMagnitude : -kMaxInputMagnitude;
      INFO("cycle " << cycle);
      REQUIRE(all_finite(brain->step(torch::full({1, 4}, v), torch::full({1}, v))));
    }
    for (const auto& [name, tensor] : snapshot(*brain)) {
      INFO("buffer " << name);
      if (tensor.is_floating_point()) CHECK(all_finite(tensor));
    }
    CHECK(brain->field().abs().max().item<float>() < 1e3f);
  }
}

TEST_CASE("A robot whose field stops being finite gets NaN motors in that cycle, the others not",
          "[brain][limits]") {
  for (const char* step : {"fast", "reference"}) {
    for (const float poison : {std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity()}) {
      INFO("field_step " << step << ", poison " << poison);
      auto brain = make_brain(config_for(step), {1, 2, 3});
      for (int cycle = 0; cycle < 3; ++cycle) {
        const auto s = test_sensors(cycle, {1, 2, 3}, 4);
        REQUIRE(all_finite(brain->step(s, test_reward(cycle, {1, 2, 3}))));
      }
      // One voxel deep inside robot 1's field (no face, no motor channel).
      brain->field()[1][20][3][4][5] = poison;
      const auto copies = SyncCounter::count();
      const auto m = brain->step(test_sensors(3, {1, 2, 3}, 4), test_reward(3, {1, 2, 3}));
      CHECK(SyncCounter::count() - copies == 1);  // the motors' copy, nothing more
      CHECK(torch::isnan(m[1]).all().item<bool>());
      CHECK(all_finite(m[0]));
      CHECK(all_finite(m[2]));
      CHECK(all_finite(brain->field()[0]));
      CHECK(all_finite(brain->field()[2]));
      // Such a brain is never written over a save.
      const std::string path = temp_path(std::string("poisoned-") + step + ".pt");
      CHECK_THROWS_WITH(brain->save(path), Catch::Contains("NaN or Inf"));
    }
  }
}

}  // namespace fieldbrain::test
