// The arithmetic of the CUDA kernels that spread a robot over many blocks
// (brain/ops/split_reduction_math.h) run on the CPU in the kernels' own order (the *_two_stage
// functions) against the CPU kernels:
// the error field's values bit for bit and its boost within 1e-6 relative (both sum in double,
// in a different order); the statistics of Ef against a double-precision reference (max exact,
// the weight within 1e-6 relative: 64 float partials of double sums); the imprint's maps and
// each plane's first maximum of the empty score bit for bit; the field step's noise blocks
// against philox::normal drawn per element; the diffusion's wrap against a modulo. No GPU
// needed: what the GPU adds (the same functions called from its threads) is checked by the
// [cuda] tests (scripts/gpu-check.sh --parts tests).
#include "test/support/catch.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "brain/ops/cycle_layout.h"
#include "brain/ops/hierarchy_learn.h"
#include "brain/ops/hierarchy_learn_math.h"
#include "brain/ops/philox.h"
#include "brain/ops/sensory_imprint.h"
#include "brain/ops/split_reduction_math.h"

namespace {

namespace h = fieldbrain::ops::hierarchy;
namespace split = fieldbrain::ops::split;

std::vector<float> uniform_values(int64_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace

TEST_CASE("The split error field has the CPU kernel's values bit for bit and its boost within 1e-6",
          "[ops][split_reduction]") {
  int below_clamp = 0;
  for (const int R : {8, 16, 17, 32}) {
    for (const int64_t S : {5, 24, 40}) {
      CAPTURE(R, S);
      const int64_t V = static_cast<int64_t>(R) * R * R;
      // Errors around the 0.1 threshold, so that sites go both up and down.
      const auto values = uniform_values(S, -0.3f, 0.6f, static_cast<uint32_t>(R * 100 + S));
      const auto e = torch::from_blob(const_cast<float*>(values.data()), {1, S}, torch::kFloat).clone();
      auto facts = torch::zeros({1, fieldbrain::kFactColumns}, torch::kLong);
      facts[0][fieldbrain::kFactCycle] = 5;
      auto ef = torch::zeros({1, R, R, R});
      auto has_ef = torch::zeros({1});
      auto boost = torch::ones({1});
      fieldbrain::ops::error_field_update_(e, facts, ef, has_ef, boost);
      REQUIRE(has_ef.item<float>() == 1.0f);

      float up[h::kSites], down[h::kSites];
      const float base = h::error_field_terms(values.data(), S, up, down);
      int sx[h::kSites], sy[h::kSites];
      split::site_coords(R, sx, sy);
      const float* cpu = ef.data_ptr<float>();
      int64_t differing = 0;
      for (int x = 0; x < R; ++x)
        for (int y = 0; y < R; ++y)
          for (int z = 0; z < R; ++z) {
            const float value = split::error_field_value_at(up, down, base, sx, sy, R, x, y, z);
            if (value != cpu[(static_cast<int64_t>(x) * R + y) * R + z]) ++differing;
          }
      CHECK(differing == 0);

      const double mean = split::error_field_abs_mean_two_stage(up, down, base, R);
      const float split_boost = h::error_boost(static_cast<float>(mean));
      const float cpu_boost = boost.item<float>();
      CHECK(std::fabs(split_boost - cpu_boost) <= 1e-6f * cpu_boost);
      // And against a plain double sum over every voxel (the columns' three classes are right).
      double direct = 0.0;
      for (int64_t i = 0; i < V; ++i) direct += std::fabs(static_cast<double>(cpu[i]));
      CHECK(std::fabs(mean - direct / static_cast<double>(V)) <= 1e-9 * (direct / static_cast<double>(V)));
      if (cpu_boost < 3.0f) ++below_clamp;
    }
  }
  CHECK(below_clamp > 0);  // the boost was compared where the clamp does not hide a difference
}

TEST_CASE("The split statistics of Ef cover every voxel once and match a double-precision reference",
          "[ops][split_reduction]") {
  for (const int R : {4, 8, 16, 32, 33}) {
    CAPTURE(R);
    const int64_t V = static_cast<int64_t>(R) * R * R;
    // Every voxel is taken by exactly one (slice, thread).
    std::vector<int> seen(static_cast<size_t>(V), 0);
    for (int s = 0; s < split::kEfSlices; ++s) {
      REQUIRE(split::slice_begin(V, s) <= split::slice_begin(V, s + 1));
      for (int t = 0; t < split::kThreads; ++t)
        for (int64_t i = split::slice_begin(V, s) + t; i < split::slice_begin(V, s + 1); i += split::kThreads)
          ++seen[static_cast<size_t>(i)];
    }
    CHECK(split::slice_begin(V, 0) == 0);
    CHECK(split::slice_begin(V, split::kEfSlices) == V);
    CHECK(std::count(seen.begin(), seen.end(), 1) == V);

    for (const float scale : {0.01f, 0.3f, 3.0f}) {
      CAPTURE(scale);
      auto ef = uniform_values(V, -scale, scale, static_cast<uint32_t>(R * 7 + scale * 100));
      ef[static_cast<size_t>(V / 3)] = -1.5f * scale;  // the largest magnitude, negative
      float max = -1.0f, weight = -1.0f;
      split::ef_stats_two_stage(ef.data(), V, &max, &weight);
      double sum = 0.0;
      for (const float v : ef) sum += std::fabs(static_cast<double>(v));
      const double mean = sum / static_cast<double>(V);
      CHECK(max == 1.5f * scale);
      CHECK(std::fabs(weight - std::min(0.5, mean)) <= 1e-6 * std::min(0.5, mean));
    }
  }
}

TEST_CASE("The per-voxel imprint maps and plane maxima are the CPU kernel's bit for bit",
          "[ops][split_reduction]") {
  namespace ops = fieldbrain::ops;
  for (const int R : {8, 13, 16}) {
    CAPTURE(R);
    const int64_t S = 24, V = static_cast<int64_t>(R) * R * R;
    torch::manual_seed(R);
    auto field = torch::randn({1, 64, R, R, R});
    auto occ = (torch::rand({1, R, R, R}) < 0.1).to(torch::kFloat);  // some places taken
    const auto field_before = field.clone(), occ_before = occ.clone();
    auto map_data = torch::zeros({1, 100, S});
    auto map_loc = torch::zeros({1, 100, 3}, torch::kLong);
    auto strength = torch::zeros({1});
    const ops::ImprintScratchLayout layout{V, S, R};
    auto scratch = torch::zeros({1, layout.floats()});
    auto plane_argmax = torch::zeros({1, R}, torch::kInt);
    const auto sensors = torch::rand({1, S});
    auto facts = torch::zeros({1, fieldbrain::kFactColumns}, torch::kLong);
    facts[0][fieldbrain::kFactHasInput] = 1;
    facts[0][fieldbrain::kFactCycle] = 3;
    const auto values = torch::zeros({1, fieldbrain::kValueColumns});
    const std::vector<at::Tensor> drive{torch::full({1}, 0.5f), torch::zeros({1}), torch::ones({1}),
                                        torch::full({1}, 0.2f), torch::full({1}, 0.1f)};
    const uint64_t seed = 977 + R, cycle = 12;
    const auto noise_key = torch::tensor({static_cast<int64_t>(seed), static_cast<int64_t>(cycle)}, torch::kLong).view({1, 2});
    const auto tables = ops::make_imprint_tables(S, R);
    ops::sensory_imprint_(field, occ, map_data, map_loc, strength, scratch, plane_argmax, sensors,
                          facts, values, drive, noise_key, tables);
    REQUIRE(strength.item<float>() != 0.0f);  // the robot imprinted: the maps were made

    const float* F = field_before.data_ptr<float>();
    const float* row = scratch.data_ptr<float>();
    int64_t differing = 0;
    for (int64_t v = 0; v < V; ++v) {
      float act = 0.0f, fp = 0.0f;
      split::voxel_act_fp(F, V, v, &act, &fp);
      if (act != row[layout.act() + v] || fp != row[layout.fp() + v]) ++differing;
    }
    CHECK(differing == 0);
    const int32_t* arg = plane_argmax.data_ptr<int32_t>();
    for (int x = 0; x < R; ++x) {
      float best = 0.0f;
      int best_v = -1;
      split::plane_empty_first_max(row + layout.act(), occ_before.data_ptr<float>(), seed, cycle, R, x,
                                   &best, &best_v);
      CHECK(best_v == arg[x]);
      CHECK(best == row[layout.plane_max() + x]);
    }
  }
}

TEST_CASE("The field step's noise blocks give every element its own Philox normal once",
          "[ops][split_reduction]") {
  namespace philox = fieldbrain::philox;
  for (const int64_t R : {1, 2, 3, 5, 16}) {
    CAPTURE(R);
    const int64_t V = R * R * R, n = 48 * V;
    const uint64_t seed = 4242 + static_cast<uint64_t>(R), cycle = 77;
    int64_t covered = 0, wrong_place = 0, wrong_value = 0;
    for (int64_t k = 0; k < (n + 3) / 4; ++k) {
      const auto blk = split::noise_block(k, V);
      float z[4];
      philox::normal4(seed, cycle, philox::kStreamSpontaneous, static_cast<uint32_t>(k), z);
      for (int j = 0; j < blk.count; ++j) {
        int c = -1;
        int64_t v = -1;
        split::noise_block_element(blk, V, j, &c, &v);
        const int64_t e = 4 * k + j;
        if (c != e / V || v != e % V) ++wrong_place;
        // The normal of element c*V + v drawn on its own (the CPU kernel's draw).
        if (z[j] != philox::normal(seed, cycle, philox::kStreamSpontaneous, static_cast<uint64_t>(e))) ++wrong_value;
        ++covered;
      }
    }
    CHECK(covered == n);
    CHECK(wrong_place == 0);
    CHECK(wrong_value == 0);
    CHECK(split::noise_block((n + 3) / 4, V).count == 0);  // past the end: nothing
  }
}

TEST_CASE("The diffusion wraps a neighbour's coordinate as a modulo by R does",
          "[ops][split_reduction]") {
  int64_t differing = 0;
  for (int R = 1; R <= 70; ++R)
    for (int a = -1; a <= R; ++a)
      if (split::periodic_wrap(a, R) != (a + R) % R) ++differing;
  CHECK(differing == 0);
}
