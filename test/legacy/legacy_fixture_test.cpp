// The reader of the legacy fixtures (app/fieldbrain/legacy_fixture.h): every committed scenario
// loads, and a damaged .npy or fixture is refused with a message that names the file.
#include "test/support/catch.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "app/fieldbrain/legacy_fixture.h"
#include "test/support/files.h"

namespace fs = std::filesystem;
using Catch::Contains;
using fieldbrain::legacy::legacy_fixture_root;
using fieldbrain::legacy::load_legacy_fixture;
using fieldbrain::legacy::read_npy;

namespace {

using fieldbrain::test::file_text;
using fieldbrain::test::write_file;

// A scratch folder under the system's temp dir, removed at the end of the test.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    path = fs::temp_directory_path() / ("fieldbrain_legacy_fixture_" + std::to_string(::getpid()) +
                                        "_" + std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// A version-1 .npy with the given header dict and data bytes (header padded as numpy pads it).
std::string npy(std::string dict, const std::string& data) {
  dict += ' ';
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += char(dict.size() & 0xff);
  out += char(dict.size() >> 8);
  return out + dict + data;
}

}  // namespace

TEST_CASE("every committed legacy scenario loads with arrays that agree with its meta.json",
          "[legacy]") {
  auto names = fieldbrain::legacy::legacy_scenarios();
  names.push_back("r16_s24m4_construction");
  for (const auto& name : names) {
    INFO(name);
    const auto f = load_legacy_fixture(legacy_fixture_root() + "/" + name);
    const int64_t S = f.meta.at("S"), M = f.meta.at("M"), N = f.meta.at("cycles");
    CHECK(f.motors.size(1) == M);
    CHECK(f.inputs.size(0) == N);
    CHECK(f.inputs.size(1) == S + (f.meta.at("rewards").get<bool>() ? 1 : 0));
    CHECK(f.motors.abs().max().item<double>() <= 1.0);  // tanh
    CHECK(f.meta.at("em_brain_commit").get<std::string>().rfind("ef2bdb8", 0) == 0);
    // the extras the script records load too, one value per cycle
    for (const char* extra : {"field_abs_mean", "imprint_strategy", "cognitive_mode", "clock"}) {
      CHECK(read_npy(f.dir + "/" + extra + ".npy").size(0) == N);
    }
    // the pinned clock of cycle n is t0 + n * dt, computed in double exactly so
    const double t0 = f.meta.at("t0"), dt = f.meta.at("dt");
    const torch::Tensor clock = read_npy(f.dir + "/clock.npy");
    for (int64_t n = 0; n < N; ++n) REQUIRE(clock[n].item<double>() == t0 + double(n) * dt);
  }
}

TEST_CASE("read_npy reads float32, float64 and int64 arrays of any rank", "[legacy]") {
  ScratchDir dir;
  const fs::path p = dir.path / "a.npy";
  const float f32[3] = {1.5f, -2.0f, 3.25f};
  write_file(p, npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                    std::string(reinterpret_cast<const char*>(f32), sizeof f32)));
  torch::Tensor t = read_npy(p.string());
  CHECK(t.scalar_type() == torch::kFloat32);
  CHECK(t[2].item<float>() == 3.25f);
  const int64_t i64[6] = {1, 2, 3, 4, 5, -6};
  write_file(p, npy("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }",
                    std::string(reinterpret_cast<const char*>(i64), sizeof i64)));
  t = read_npy(p.string());
  CHECK(t.sizes() == c10::IntArrayRef({2, 3}));
  CHECK(t[1][2].item<int64_t>() == -6);
  const double f64 = 0.1;
  write_file(p, npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                    std::string(reinterpret_cast<const char*>(&f64), sizeof f64)));
  t = read_npy(p.string());
  CHECK(t.dim() == 0);
  CHECK(t.item<double>() == 0.1);
}

TEST_CASE("read_npy refuses a truncated or forged .npy with a message naming the file",
          "[legacy]") {
  ScratchDir dir;
  const fs::path p = dir.path / "bad.npy";
  const std::string name = p.string();
  const std::string good = file_text(legacy_fixture_root() + "/r16_s24m4_smooth/confidence.npy");
  REQUIRE(good.size() > 200);

  SECTION("data cut short") {
    write_file(p, good.substr(0, good.size() - 8));
    CHECK_THROWS_WITH(read_npy(name), Contains(name) && Contains("claims more float64 values"));
  }
  SECTION("header cut short") {
    write_file(p, good.substr(0, 40));
    CHECK_THROWS_WITH(read_npy(name), Contains(name) && Contains("the file ends inside its"));
  }
  SECTION("trailing bytes after the data") {
    write_file(p, good + std::string(8, '\0'));
    CHECK_THROWS_WITH(read_npy(name), Contains(name) && Contains("trailing"));
  }
  SECTION("a shape that claims more values than the file holds") {
    write_file(p, npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000,), }",
                      std::string(16, '\0')));
    CHECK_THROWS_WITH(read_npy(name), Contains(name) && Contains("claims more float64 values"));
  }
  SECTION("an unsupported dtype") {
    write_file(
        p, npy("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", std::string(16, '\0')));
    CHECK_THROWS_WITH(read_npy(name), Contains(name) && Contains("header 'descr' is '>f8'"));
  }
  SECTION("Fortran order") {
    write_file(
        p, npy("{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }", std::string(16, '\0')));
    CHECK_THROWS_WITH(read_npy(name), Contains(name) && Contains("C order"));
  }
  SECTION("a forged dimension") {
    write_file(p, npy("{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }",
                      std::string(16, '\0')));
    CHECK_THROWS_WITH(read_npy(name), Contains(name) && Contains("negative dimension"));
  }
  SECTION("no magic") {
    write_file(p, "PK\x03\x04 this is a zip file, not an npy");
    CHECK_THROWS_WITH(read_npy(name), Contains(name) && Contains("not a .npy"));
  }
  SECTION("a missing file") {
    CHECK_THROWS_WITH(read_npy(name + ".absent"), Contains(name + ".absent"));
  }
}

TEST_CASE("load_legacy_fixture refuses arrays that disagree with meta.json, naming the file",
          "[legacy]") {
  ScratchDir dir;
  const fs::path src = legacy_fixture_root() + "/r16_s24m4_smooth";
  for (const char* f : {"meta.json", "inputs.npy", "motors.npy", "confidence.npy", "regions.npy"})
    fs::copy_file(src / f, dir.path / f);
  REQUIRE_NOTHROW(load_legacy_fixture(dir.path.string()));

  SECTION("motors of another robot") {
    fs::copy_file(legacy_fixture_root() + "/r16_s12m6_random/motors.npy", dir.path / "motors.npy",
                  fs::copy_options::overwrite_existing);
    CHECK_THROWS_WITH(load_legacy_fixture(dir.path.string()),
                      Contains((dir.path / "motors.npy").string()) && Contains("shape"));
  }
  SECTION("regions stored as float") {
    fs::copy_file(src / "confidence.npy", dir.path / "regions.npy",
                  fs::copy_options::overwrite_existing);
    CHECK_THROWS_WITH(load_legacy_fixture(dir.path.string()),
                      Contains((dir.path / "regions.npy").string()) && Contains("dtype"));
  }
  SECTION("a meta.json without cycles") {
    write_file(dir.path / "meta.json", R"({"seed": 42, "R": 16, "S": 24, "M": 4})");
    CHECK_THROWS_WITH(load_legacy_fixture(dir.path.string()),
                      Contains((dir.path / "meta.json").string()) && Contains("cycles"));
  }
  SECTION("a missing array") {
    fs::remove(dir.path / "confidence.npy");
    CHECK_THROWS_WITH(load_legacy_fixture(dir.path.string()),
                      Contains((dir.path / "confidence.npy").string()));
  }
}
