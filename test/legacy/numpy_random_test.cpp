// numpy's legacy RandomState in C++ (brain/legacy/numpy_random.h) against numpy's own outputs
// (test/fixtures/legacy/numpy_random/, made by scripts/legacy/make_numpy_fixture.py with numpy).
#include "test/support/catch.h"

#include <cstdint>
#include <string>

#include "brain/legacy/numpy_random.h"
#include "app/fieldbrain/legacy_fixture.h"

using fieldbrain::legacy::legacy_fixture_root;
using fieldbrain::legacy::NumpyRandomState;
using fieldbrain::legacy::read_npy;

namespace {
std::string numpy_dir() { return legacy_fixture_root() + "/numpy_random"; }
}  // namespace

TEST_CASE("numpy's randint(3, 6) after seed(s) comes out the same for 1,000 seeds x 8 draws",
          "[legacy]") {
  const torch::Tensor seeds = read_npy(numpy_dir() + "/seeds.npy");
  const torch::Tensor want = read_npy(numpy_dir() + "/randint_3_6.npy");
  REQUIRE(seeds.size(0) == 1000);
  REQUIRE(want.sizes() == c10::IntArrayRef({1000, 8}));
  const auto s = seeds.accessor<int64_t, 1>();
  const auto w = want.accessor<int64_t, 2>();
  int64_t mismatches = 0;
  for (int64_t j = 0; j < seeds.size(0); ++j) {
    NumpyRandomState rs(uint32_t(s[j]));
    for (int64_t k = 0; k < 8; ++k) {
      const int64_t got = rs.randint(3, 6);
      if (got != w[j][k]) {
        if (mismatches++ < 5)
          FAIL_CHECK("seed " << s[j] << " draw " << k << ": " << got << " vs numpy " << w[j][k]);
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("numpy's randint over other ranges (32- and 64-bit masked paths) comes out the same",
          "[legacy]") {
  const torch::Tensor seeds = read_npy(numpy_dir() + "/seeds.npy");
  const torch::Tensor ranges = read_npy(numpy_dir() + "/ranges.npy");
  const torch::Tensor want = read_npy(numpy_dir() + "/randint_ranges.npy");
  REQUIRE(want.size(0) == ranges.size(0));
  const auto s = seeds.accessor<int64_t, 1>();
  const auto r = ranges.accessor<int64_t, 2>();
  const auto w = want.accessor<int64_t, 3>();
  for (int64_t q = 0; q < ranges.size(0); ++q) {
    const int64_t low = r[q][0], high = r[q][1];
    INFO("randint(" << low << ", " << high << ")");
    int64_t mismatches = 0;
    for (int64_t j = 0; j < want.size(1); ++j) {
      NumpyRandomState rs(uint32_t(s[j]));
      for (int64_t k = 0; k < want.size(2); ++k) mismatches += rs.randint(low, high) != w[q][j][k];
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("numpy's random_sample after seed(s) comes out bit for bit", "[legacy]") {
  const torch::Tensor seeds = read_npy(numpy_dir() + "/seeds.npy");
  const torch::Tensor want = read_npy(numpy_dir() + "/random_sample.npy");
  const auto s = seeds.accessor<int64_t, 1>();
  const auto w = want.accessor<double, 2>();
  for (int64_t j = 0; j < want.size(0); ++j) {
    NumpyRandomState rs(uint32_t(s[j]));
    for (int64_t k = 0; k < want.size(1); ++k) CHECK(rs.random_sample() == w[j][k]);
  }
}

TEST_CASE("seed 42 gives the construction fixture's n_waves", "[legacy]") {
  const auto f =
      fieldbrain::legacy::load_legacy_fixture(legacy_fixture_root() + "/r16_s24m4_construction");
  NumpyRandomState rs(uint32_t(f.meta.at("seed").get<int64_t>()));
  CHECK(rs.randint(3, 6) == f.meta.at("n_waves").get<int64_t>());
}

TEST_CASE("the generator's state can be saved and restored mid-stream", "[legacy]") {
  NumpyRandomState a(7);
  for (int i = 0; i < 700; ++i) a.next_uint32();  // past one regeneration of the key
  NumpyRandomState b;
  b.set_state(a.key(), a.pos());
  for (int i = 0; i < 1000; ++i) REQUIRE(a.randint(0, 1000) == b.randint(0, 1000));
  SECTION("a position outside the key is refused") {
    CHECK_THROWS_AS(b.set_state(a.key(), 625), std::invalid_argument);
    CHECK_THROWS_AS(b.set_state(a.key(), -1), std::invalid_argument);
  }
}

TEST_CASE("randint refuses an empty range and returns low for a one-value range", "[legacy]") {
  NumpyRandomState rs(1);
  CHECK_THROWS_AS(rs.randint(3, 3), std::invalid_argument);
  CHECK_THROWS_AS(rs.randint(5, 2), std::invalid_argument);
  const uint32_t before = NumpyRandomState(1).next_uint32();
  CHECK(rs.randint(4, 5) == 4);
  CHECK(rs.next_uint32() == before);  // numpy draws nothing for a one-value range
}
