// The brain archive (brain/persistence.*): round trip, Python interoperability, and refusal
// of every kind of damaged file with a message that says what is wrong.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "brain/persistence.h"

namespace fs = std::filesystem;
using fieldbrain::Archive;
using fieldbrain::load_archive;
using fieldbrain::save_archive;

namespace {

fs::path temp_dir() {
  char tmpl[] = "/tmp/fieldbrain-archive-XXXXXX";
  return fs::path(mkdtemp(tmpl));
}

std::map<std::string, torch::Tensor> sample_tensors() {
  torch::manual_seed(7);
  return {{"field", torch::randn({2, 3, 4})},
          {"counter", torch::arange(5, torch::kInt64)},
          {"mask", torch::tensor({true, false, true})},
          {"weights", torch::rand({6}, torch::kFloat64)}};
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_all(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), bytes.size());
}

std::string load_error(const fs::path& p) {
  try {
    load_archive(p.string());
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("An archive round-trips tensors bit for bit and metadata exactly", "[persistence]") {
  auto dir = temp_dir();
  auto tensors = sample_tensors();
  nlohmann::json meta = {{"cycle", 123}, {"config", {{"resolution", 16}}}};
  save_archive((dir / "a.pt").string(), tensors, meta);
  Archive back = load_archive((dir / "a.pt").string());
  REQUIRE(back.meta == meta);
  REQUIRE(back.tensors.size() == tensors.size());
  for (const auto& [name, t] : tensors) {
    INFO(name);
    REQUIRE(back.tensors.count(name) == 1);
    CHECK(back.tensors[name].scalar_type() == t.scalar_type());
    CHECK(back.tensors[name].sizes() == t.sizes());
    CHECK(torch::equal(back.tensors[name], t));
  }
  // No temp files are left behind by an atomic save.
  int files = 0;
  for (auto& e : fs::directory_iterator(dir)) files += e.is_regular_file();
  CHECK(files == 1);
  fs::remove_all(dir);
}

TEST_CASE("Python's torch.load opens an archive and verifies its checksum", "[persistence]") {
  auto dir = temp_dir();
  save_archive((dir / "a.pt").string(), sample_tensors(), {{"who", "test"}});
  const std::string cmd = std::string(FIELDBRAIN_PYTHON) + " " + FIELDBRAIN_SOURCE_DIR +
                          "/scripts/verify_archive.py " + (dir / "a.pt").string();
  CHECK(std::system(cmd.c_str()) == 0);
  fs::remove_all(dir);
}

TEST_CASE("Damaged archives are refused with a clear reason", "[persistence]") {
  auto dir = temp_dir();
  const auto good = dir / "good.pt";
  save_archive(good.string(), sample_tensors(), {{"cycle", 1}});
  const std::string bytes = read_all(good);
  const auto bad = dir / "bad.pt";

  SECTION("a missing file") {
    CHECK_THAT(load_error(dir / "nope.pt"), Catch::Contains("cannot open"));
  }
  SECTION("an empty file") {
    write_all(bad, "");
    CHECK_THAT(load_error(bad), Catch::Contains("empty"));
  }
  SECTION("a truncated file, at several lengths") {
    for (size_t keep : {bytes.size() / 4, bytes.size() / 2, bytes.size() - 30}) {
      write_all(bad, bytes.substr(0, keep));
      INFO("kept " << keep << " of " << bytes.size());
      CHECK_FALSE(load_error(bad).empty());
    }
  }
  SECTION("one flipped byte inside the tensor data") {
    // The float field's bytes appear verbatim in the (uncompressed) zip: find and flip one.
    auto t = sample_tensors().at("field").contiguous();
    std::string raw(static_cast<const char*>(t.data_ptr()), t.numel() * t.element_size());
    auto at = bytes.find(raw);
    REQUIRE(at != std::string::npos);
    std::string damaged = bytes;
    damaged[at + raw.size() / 2] ^= 0x01;
    write_all(bad, damaged);
    CHECK_THAT(load_error(bad), Catch::Contains("checksum mismatch"));
  }
  SECTION("a file that is not an archive") {
    write_all(bad, "hello, I am not a zip file at all");
    CHECK_THAT(load_error(bad), Catch::Contains("corrupt"));
  }
  fs::remove_all(dir);
}

TEST_CASE("A failed save leaves the previous file intact", "[persistence]") {
  auto dir = temp_dir();
  const auto path = dir / "a.pt";
  save_archive(path.string(), sample_tensors(), {{"generation", 1}});
  // Saving into a directory that does not exist fails before touching anything.
  CHECK_THROWS_AS(save_archive((dir / "missing" / "a.pt").string(), sample_tensors(), {}),
                  std::runtime_error);
  CHECK(load_archive(path.string()).meta.at("generation") == 1);
  fs::remove_all(dir);
}
