// `fieldbrain compare-original` (app/fieldbrain/compare_original.*): usage errors and a path
// that is not an em-brain exit 2 with a message, a fixture the legacy profile does not match
// exits 1, and the committed fixtures of the original (test/fixtures/legacy/) pass through its
// --fixture mode, which needs no em-brain checkout.
#include "app/fieldbrain/compare_original.h"
#include "app/fieldbrain/legacy_fixture.h"

#include <unistd.h>

#include "test/support/catch.h"
#include "test/support/skip.h"
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;
using namespace fieldbrain;

namespace {

struct Captured {
  int rc = 0;
  std::string out, err;
};

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

Captured run(const CompareOriginalOptions& o) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  Captured c;
  c.rc = run_compare_original(o, out, err);
  c.out = read_all(out);
  c.err = read_all(err);
  std::fclose(out);
  std::fclose(err);
  return c;
}

fs::path fresh(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

const fs::path kFixtures = fs::path(FIELDBRAIN_SOURCE_DIR) / "test/fixtures/legacy";

}  // namespace

TEST_CASE("compare-original exits 2 with a message when PATH is not an em-brain checkout",
          "[legacy]") {
  const fs::path empty = fresh("fieldbrain-not-em-brain");
  CompareOriginalOptions o;
  o.em_brain = empty.string();
  Captured c = run(o);
  CHECK(c.rc == 2);
  CHECK_THAT(c.err, Catch::Contains("is not an em-brain checkout") &&
                        Catch::Contains("unified_field_brain.py"));
  o.em_brain = (empty / "missing").string();
  c = run(o);
  CHECK(c.rc == 2);
  CHECK_THAT(c.err, Catch::Contains("is not a directory"));
  o.em_brain.clear();
  CHECK(run(o).rc == 2);
  fs::remove_all(empty);
}

TEST_CASE("compare-original exits 2 on bad usage, naming the problem", "[legacy]") {
  CompareOriginalOptions o;
  o.em_brain = FIELDBRAIN_SOURCE_DIR;
  o.scenarios = {"r16_s24m4_sideways"};
  Captured c = run(o);
  CHECK(c.rc == 2);
  CHECK_THAT(c.err, Catch::Contains("r16_s24m4_sideways"));
  o.scenarios.clear();
  o.fixtures = {"somewhere"};
  o.recording = "elsewhere";
  CHECK(run(o).rc == 2);
}

TEST_CASE("the parity matrix has 24 scenarios with the contract's names", "[legacy]") {
  const auto all = all_original_scenarios();
  CHECK(all.size() == 24);
  CHECK(all.front().name() == "r16_s24m4_smooth");
  CHECK(all.back().name() == "r32_s12m6_negative_reward");
  CHECK(pick_original_scenarios({"all"}).size() == 24);
  CHECK(pick_original_scenarios({}).size() == quick_original_scenarios().size());
  CHECK(pick_original_scenarios({"r32_s12m6_random"}).at(0).resolution == 32);
}

TEST_CASE("compare-original fails, exit 1, on a fixture the legacy profile does not match",
          "[legacy]") {
  // Motors of 5 cannot come from the original (tanh-bounded): every cycle differs.
  const fs::path dir = fresh("fieldbrain-wrong-fixture") / "r16_s24m4_wrong";
  fs::create_directories(dir);
  const std::string script =
      "import json, numpy as np, sys; d = sys.argv[1]; n = 4;"
      "json.dump({'seed': 42, 'R': 16, 'S': 24, 'M': 4, 't0': 0.0, 'dt': 0.05, 'cycles': n},"
      " open(d + '/meta.json', 'w'));"
      "np.save(d + '/inputs.npy', np.random.RandomState(1).rand(n, 24));"
      "np.save(d + '/motors.npy', np.full((n, 4), 5.0));"
      "np.save(d + '/confidence.npy', np.zeros(n)); np.save(d + '/regions.npy', np.zeros(n, "
      "np.int64))";
  const std::string cmd =
      std::string(FIELDBRAIN_PYTHON) + " -c \"" + script + "\" '" + dir.string() + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  CompareOriginalOptions o;
  o.fixtures = {dir.string()};
  const Captured c = run(o);
  INFO(c.out << c.err);
  CHECK(c.rc == 1);
  CHECK_THAT(c.out, Catch::Contains("r16_s24m4_wrong") && Catch::Contains("FAIL"));
  fs::remove_all(dir.parent_path());
}

TEST_CASE("compare-original --fixture passes on the committed fixtures of the original",
          "[parity][legacy]") {
  CompareOriginalOptions o;
  // The set the original recorded under this LibTorch release (legacy_fixture.h).
  std::string recorded;
  const std::string root = legacy::legacy_cycle_fixture_root(&recorded);
  if (root.empty()) FIELDBRAIN_SKIP(legacy::legacy_cycle_fixture_missing(recorded));
  for (const char* name : {"r16_s24m4_smooth", "r16_s12m6_negative"}) {
    const fs::path dir = fs::path(root) / name;
    // Committed with the set (scripts/legacy/run_original.py writes it): missing is a failure.
    INFO("fixture " << dir);
    REQUIRE(fs::exists(dir / "meta.json"));
    o.fixtures.push_back(dir.string());
  }
  const Captured c = run(o);
  INFO(c.out << c.err);
  CHECK(c.rc == 0);
  CHECK_THAT(c.out, Catch::Contains("PASS"));
}
