// The brain archive (brain/persistence.*): round trip, Python interoperability, and refusal
// of every kind of damaged file with a message that says what is wrong.
#include "test/support/catch.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>

#include "brain/field_brain.h"
#include "brain/persistence.h"
#include "brain/plain_pickle.h"
#include "test/support/files.h"
#include "test/support/forged_archive.h"
#include "test/support/old_release_saves.h"
#include "test/support/pickle_archive.h"

namespace fs = std::filesystem;
using fieldbrain::Archive;
using fieldbrain::load_archive;
using fieldbrain::save_archive;

namespace {

using fieldbrain::test::file_text;
using fieldbrain::test::write_file;

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

TEST_CASE("Python's torch.load(weights_only=True) opens an archive as plain dicts", "[persistence]") {
  auto dir = temp_dir();
  const auto path = (dir / "a.pt").string();
  save_archive(path, sample_tensors(), {{"who", "test"}});
  // Values computed here independently: sample_tensors' counter is arange(5), its mask has two
  // true elements.
  const std::string script =
      "import json, torch\n"
      "a = torch.load('" + path + "', weights_only=True)\n"
      "assert type(a) is dict and type(a['tensors']) is dict, type(a)\n"
      "assert a['format'] == 'fieldbrain-archive' and a['version'] == 2\n"
      "assert json.loads(a['meta']) == {'who': 'test'}\n"
      "assert a['tensors']['counter'].tolist() == [0, 1, 2, 3, 4]\n"
      "assert int(a['tensors']['mask'].sum()) == 2\n"
      "assert tuple(a['tensors']['field'].shape) == (2, 3, 4)\n";
  const auto script_path = dir / "check.py";
  write_file(script_path, script);
  CHECK(std::system((std::string(FIELDBRAIN_PYTHON) + " " + script_path.string()).c_str()) == 0);
  fs::remove_all(dir);
}

TEST_CASE("A version 1 archive still loads and an unknown version is refused by number",
          "[persistence]") {
  auto dir = temp_dir();
  const auto tensors = sample_tensors();
  const std::string meta_dump = nlohmann::json{{"cycle", 3}}.dump();
  auto archive_dict = [&](int64_t version, const std::string& digest) {
    c10::impl::GenericDict t(c10::StringType::get(), c10::TensorType::get());
    for (const auto& [name, tensor] : tensors) t.insert(name, tensor);
    c10::impl::GenericDict top(c10::StringType::get(), c10::AnyType::get());
    top.insert("format", std::string("fieldbrain-archive"));
    top.insert("version", version);
    top.insert("meta", meta_dump);
    top.insert("tensors", t);
    top.insert("sha256", digest);
    return top;
  };
  SECTION("version 1: type-tagged dicts (torch::pickle_save) and the v1 digest") {
    const std::vector<char> v1 =
        torch::pickle_save(archive_dict(1, fieldbrain::archive_digest(tensors, meta_dump, 1)));
    write_file(dir / "v1.pt", v1);
    const Archive back = load_archive((dir / "v1.pt").string());
    CHECK(back.version == 1);
    CHECK(back.meta.at("cycle") == 3);
    CHECK(torch::equal(back.tensors.at("field"), tensors.at("field")));
  }
  SECTION("version 7 (from a newer build)") {
    write_file(dir / "v7.pt", fieldbrain::pickle_save_plain(archive_dict(
                                  7, fieldbrain::archive_digest(tensors, meta_dump, 7))));
    CHECK_THAT(load_error(dir / "v7.pt"), Catch::Contains("version 7"));
  }
  fs::remove_all(dir);
}

// The brain saves that the releases writing brain versions 1, 2 and 3 wrote themselves
// (test/fixtures/saves/): version 1 is also the last archive container of version 1
// (type-tagged dicts, the v1 digest); versions 2 and 3 are container version 2.
TEST_CASE("Archives written by old releases load with their checksums verified, here and in Python",
          "[persistence][old-saves]") {
  using fieldbrain::test::matches_sidecar;
  std::string paths;
  for (const int version : fieldbrain::test::old_brain_versions()) {
    CAPTURE(version);
    const nlohmann::json sidecar =
        fieldbrain::test::old_save_sidecar("brain-v" + std::to_string(version) + ".json");
    const std::string path = fieldbrain::test::old_save_path(sidecar.at("file").get<std::string>());
    paths += " " + path;
    const Archive a = load_archive(path);
    CHECK(a.version == (version == 1 ? 1 : 2));
    CHECK(a.meta.at("format") == "fieldbrain-brain");
    CHECK(a.meta.at("version") == version);
    CHECK(a.meta.at("robot_keys") == sidecar.at("robot_keys"));
    // Versions 1 and 2 held one mt19937 generator state per robot; version 3 the noise key.
    CHECK(a.tensors.count("generator.0") == (version < 3 ? 1u : 0u));
    CHECK(a.tensors.count("state.noise_key") == (version < 3 ? 0u : 1u));
    // Every saved buffer is the one the release held (version 1 saved the bank whole).
    int checked = 0;
    for (const auto& [name, entry] : sidecar.at("buffers").items()) {
      const auto it = a.tensors.find("state." + name);
      if (it == a.tensors.end()) continue;
      CAPTURE(name);
      CHECK(matches_sidecar(it->second, entry));
      ++checked;
    }
    CHECK(checked == static_cast<int>(sidecar.at("buffers").size()) - (version == 1 ? 0 : 1));
    if (version >= 2) CHECK(a.tensors.at("packed.attractors.bank.rows").size(0) == 1);
  }
  // Python's reading of the same files, with the digest computed independently in hashlib.
  const std::string cmd = std::string(FIELDBRAIN_PYTHON) + " " + FIELDBRAIN_SOURCE_DIR +
                          "/scripts/verify_archive.py" + paths;
  CHECK(std::system(cmd.c_str()) == 0);
}

TEST_CASE("An old release's archive with one changed tensor byte is refused by its checksum",
          "[persistence][old-saves]") {
  auto dir = temp_dir();
  const auto bad = dir / "changed.pt";
  for (const int version : fieldbrain::test::old_brain_versions()) {
    CAPTURE(version);
    const std::string path =
        fieldbrain::test::old_save_path("brain-v" + std::to_string(version) + ".pt");
    const std::string bytes = file_text(path);
    // The field's bytes appear verbatim in the (uncompressed) zip: change one in its middle.
    const torch::Tensor field = load_archive(path).tensors.at("state.field").contiguous();
    const std::string raw(static_cast<const char*>(field.data_ptr()),
                          field.numel() * field.element_size());
    const auto at = bytes.find(raw);
    REQUIRE(at != std::string::npos);
    std::string changed = bytes;
    changed[at + raw.size() / 2 + 1] ^= 0x01;
    write_file(bad, changed);
    CHECK_THAT(load_error(bad), Catch::Contains("checksum mismatch"));
  }
  fs::remove_all(dir);
}

TEST_CASE("Packed slots keep exactly the live slots of a bank and restore them in place",
          "[persistence]") {
  torch::manual_seed(3);
  const torch::Tensor bank = torch::randn({2, 3, 4, 5});
  const torch::Tensor live = torch::tensor({{1, 0, 1}, {0, 0, 1}}, torch::kLong);
  const fieldbrain::PackedSlots packed = fieldbrain::pack_live_slots(bank, live);
  REQUIRE(packed.rows.sizes() == torch::IntArrayRef({3, 4, 5}));
  CHECK(torch::equal(packed.index, torch::tensor({{0, 0}, {0, 2}, {1, 2}}, torch::kLong)));
  CHECK(torch::equal(packed.rows[1], bank[0][2]));

  torch::Tensor restored = torch::full({2, 3, 4, 5}, 9.0f);
  fieldbrain::unpack_live_slots(restored, packed.rows, packed.index);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t a = 0; a < 3; ++a) {
      INFO("slot " << b << "," << a);
      if (live[b][a].item<int64_t>() != 0) {
        CHECK(torch::equal(restored[b][a], bank[b][a]));
      } else {
        CHECK(restored[b][a].abs().max().item<float>() == 0.0f);
      }
    }
  }
  SECTION("an index outside the bank is refused before anything is written") {
    torch::Tensor untouched = torch::full({2, 3, 4, 5}, 9.0f);
    CHECK_THROWS_WITH(fieldbrain::unpack_live_slots(untouched, packed.rows,
                                                    torch::tensor({{0, 0}, {0, 3}, {1, 2}}, torch::kLong)),
                      Catch::Contains("outside"));
    CHECK(untouched.min().item<float>() == 9.0f);
  }
  SECTION("rows of another slot shape are refused") {
    torch::Tensor other = torch::zeros({2, 3, 4, 6});
    CHECK_THROWS_AS(fieldbrain::unpack_live_slots(other, packed.rows, packed.index),
                    std::runtime_error);
  }
}

TEST_CASE("Damaged archives are refused with a clear reason", "[persistence]") {
  auto dir = temp_dir();
  const auto good = dir / "good.pt";
  save_archive(good.string(), sample_tensors(), {{"cycle", 1}});
  const std::string bytes = file_text(good);
  const auto bad = dir / "bad.pt";

  SECTION("a missing file") {
    CHECK_THAT(load_error(dir / "nope.pt"), Catch::Contains("cannot open"));
  }
  SECTION("an empty file") {
    write_file(bad, "");
    CHECK_THAT(load_error(bad), Catch::Contains("empty"));
  }
  SECTION("a truncated file, at several lengths") {
    for (size_t keep : {bytes.size() / 4, bytes.size() / 2, bytes.size() - 30}) {
      write_file(bad, bytes.substr(0, keep));
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
    write_file(bad, damaged);
    CHECK_THAT(load_error(bad), Catch::Contains("checksum mismatch"));
  }
  SECTION("a file that is not an archive") {
    write_file(bad, "hello, I am not a zip file at all");
    CHECK_THAT(load_error(bad), Catch::Contains("corrupt"));
  }
  fs::remove_all(dir);
}

TEST_CASE("An archive whose sizes claim gigabytes is refused before they are allocated",
          "[persistence]") {
  // Found by fuzz-brain_save: LibTorch 1.13 allocated a pickle string's or a zip record's
  // claimed size before noticing the file was shorter (a 1 KB save made a 4 GB allocation).
  auto dir = temp_dir();
  const auto good = dir / "good.pt";
  save_archive(good.string(), sample_tensors(), {{"cycle", 1}});
  const std::string bytes = file_text(good);
  const auto bad = dir / "bad.pt";
  rusage before{};
  getrusage(RUSAGE_SELF, &before);
  SECTION("a 4 GB string in data.pkl") {
    const std::string key = std::string("X\x07\0\0\0tensors", 12);
    const auto at = bytes.find(key);
    REQUIRE(at != std::string::npos);
    std::string damaged = bytes;
    damaged[at + 4] = '\xfa';  // length 0xfa000007
    write_file(bad, damaged);
    CHECK_THAT(load_error(bad), Catch::Contains("data.pkl claims 4194304007 bytes past its end"));
  }
  SECTION("a 2 GB zip record") {
    // The central directory entry of data.pkl: its compressed and uncompressed sizes.
    size_t entry = bytes.find("PK\x01\x02");
    while (entry != std::string::npos) {
      const size_t name_len = uint8_t(bytes[entry + 28]) | uint8_t(bytes[entry + 29]) << 8;
      const std::string name = bytes.substr(entry + 46, name_len);
      if (name.size() > 9 && name.substr(name.size() - 9) == "/data.pkl") break;
      entry = bytes.find("PK\x01\x02", entry + 4);
    }
    REQUIRE(entry != std::string::npos);
    std::string damaged = bytes;
    for (size_t field : {entry + 20, entry + 24}) damaged.replace(field, 4, "\xff\xff\xff\x7f");
    write_file(bad, damaged);
    CHECK_THAT(load_error(bad), Catch::Contains("past the file's end"));
  }
  rusage after{};
  getrusage(RUSAGE_SELF, &after);
  CHECK(after.ru_maxrss - before.ru_maxrss < 512 * 1024);  // KiB: nothing near the claim
  fs::remove_all(dir);
}

TEST_CASE("An archive whose version record fails its CRC-32 is refused before LibTorch opens it",
          "[persistence]") {
  // Found by fuzz-brain_save: LibTorch 1.13's zip reader verifies the "version" record's CRC
  // inside its constructor and, when that throws, leaks its zip state; so the check is ours.
  auto dir = temp_dir();
  const auto good = dir / "good.pt";
  save_archive(good.string(), sample_tensors(), {{"cycle", 1}});
  std::string bytes = file_text(good);
  // The version record's data follows its local header: the name ".../version" and the extra
  // field; its single digit (and newline) is what this changes.
  const size_t entry = bytes.find("/version");
  REQUIRE(entry != std::string::npos);
  const size_t local = bytes.rfind("PK\x03\x04", entry);
  REQUIRE(local != std::string::npos);
  const size_t name_len = uint8_t(bytes[local + 26]) | uint8_t(bytes[local + 27]) << 8;
  const size_t extra_len = uint8_t(bytes[local + 28]) | uint8_t(bytes[local + 29]) << 8;
  const size_t data = local + 30 + name_len + extra_len;
  REQUIRE(bytes[data] >= '1');
  REQUIRE(bytes[data] <= '9');
  bytes[data] = bytes[data] == '3' ? '2' : '3';  // still a version LibTorch reads
  const auto bad = dir / "bad.pt";
  write_file(bad, bytes);
  CHECK_THAT(load_error(bad), Catch::Contains("the version record fails its CRC-32 check"));
  fs::remove_all(dir);
}

TEST_CASE("A save whose data.pkl is not a well-formed pickle program is refused before LibTorch runs it",
          "[persistence]") {
  auto dir = temp_dir();
  const auto bad = dir / "bad.pt";
  for (const auto& pickle : fieldbrain::test::bad_pickles()) {
    INFO(pickle.what);
    write_file(bad, fieldbrain::test::archive_with_pickle(pickle.program));
    const std::string error = load_error(bad);
    CHECK_THAT(error, Catch::Contains("data.pkl") && Catch::Contains(pickle.reason));
    CHECK_THAT(error, Catch::Contains(bad.string()));
  }
  SECTION("a well-formed program passes the check and is judged as a save") {
    write_file(bad, fieldbrain::test::archive_with_pickle("\x80\x02}."));  // an empty dict
    CHECK_THAT(load_error(bad), Catch::Contains("not a fieldbrain archive"));
  }
  SECTION("a changed data.pkl byte that keeps the program well-formed fails its CRC-32") {
    const auto good = dir / "good.pt";
    save_archive(good.string(), sample_tensors(), {{"cycle", 1}});
    std::string bytes = file_text(good);
    const auto at = bytes.find("counter");  // a tensor's name inside data.pkl
    REQUIRE(at != std::string::npos);
    bytes[at] = 'k';
    write_file(bad, bytes);
    CHECK_THAT(load_error(bad), Catch::Contains("data.pkl fails its CRC-32 check"));
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

TEST_CASE("A brain save whose metadata has the wrong types is refused naming the file",
          "[persistence]") {
  // Found by fuzz-brain_save: json::value() and get<int>() threw json errors naming no file
  // (or cast 1e300 to int), which the server logged without the path.
  fieldbrain::BrainConfig c;
  c.sensory_dim = 3;
  c.motor_dim = 2;
  c.resolution = 8;
  c.attractor_capacity = 2;
  fieldbrain::FieldBrain brain(c, std::vector<uint64_t>{7});
  const fs::path dir = temp_dir();
  const std::string path = (dir / "brain.pt").string();
  const fieldbrain::ArchiveContents good = brain->archive_contents();
  const auto refusal = [&](const std::function<void(nlohmann::json&)>& change) {
    fieldbrain::ArchiveContents a = good;
    change(a.meta);
    a.save(path);
    try {
      brain->load(path);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    } catch (const std::exception& e) {
      return std::string("not a std::runtime_error: ") + e.what();
    }
    return std::string("loaded");
  };
  using Catch::Contains;
  SECTION("version as a string") {
    CHECK_THAT(refusal([](nlohmann::json& m) { m["version"] = "3"; }),
               Contains(path) && Contains("version"));
  }
  SECTION("version as a huge float") {
    CHECK_THAT(refusal([](nlohmann::json& m) { m["version"] = 1e300; }),
               Contains(path) && Contains("version 1e+300"));
  }
  SECTION("config as a number") {
    CHECK_THAT(refusal([](nlohmann::json& m) { m["config"] = 5; }),
               Contains(path) && Contains("config"));
  }
  SECTION("no robot_keys") {
    CHECK_THAT(refusal([](nlohmann::json& m) { m.erase("robot_keys"); }),
               Contains(path) && Contains("robot keys"));
  }
  SECTION("a version 2 save whose seed is a string") {
    CHECK_THAT(refusal([](nlohmann::json& m) {
                 m["version"] = 2;
                 m["config"]["seed"] = "x";
               }),
               Contains(path) && Contains("config.seed"));
  }
  SECTION("the unchanged save loads") {
    CHECK(refusal([](nlohmann::json&) {}) == "loaded");
  }
  fs::remove_all(dir);
}

// Issue 36: a brain poisoned by one huge input was saved and came back poisoned after a
// restart. The archive layer is the one place every save and every load passes through.
TEST_CASE("A state holding NaN or Inf is never saved: the last good file stays as it was",
          "[persistence]") {
  auto dir = temp_dir();
  const std::string path = (dir / "robot.pt").string();
  save_archive(path, sample_tensors(), {{"cycle", 1}});
  const std::string good = file_text(path);
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity()}) {
    INFO("value " << bad);
    auto tensors = sample_tensors();
    tensors.at("field")[1][2][3] = bad;
    std::string message;
    try {
      save_archive(path, tensors, {{"cycle", 2}});
    } catch (const std::runtime_error& e) {
      message = e.what();
    }
    CHECK(message.find("'field'") != std::string::npos);
    CHECK(message.find("NaN or Inf") != std::string::npos);
    // The server's state writer saves through ArchiveContents, on its own thread.
    fieldbrain::ArchiveContents contents{tensors, {{"cycle", 2}}};
    CHECK_THROWS_AS(contents.save(path), std::runtime_error);
    CHECK(file_text(path) == good);
    CHECK(load_archive(path).meta.at("cycle") == 1);
  }
  // float64 tensors are checked as well; integer tensors cannot hold either.
  auto tensors = sample_tensors();
  tensors.at("weights")[0] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(save_archive(path, tensors, {}), std::runtime_error);
  CHECK(file_text(path) == good);
  fs::remove_all(dir);
}

TEST_CASE("An archive holding NaN or Inf is refused on load, naming the tensor", "[persistence]") {
  auto dir = temp_dir();
  const std::string path = (dir / "robot.pt").string();
  auto tensors = sample_tensors();
  tensors.at("weights")[3] = std::numeric_limits<double>::infinity();
  // Signed like a real save: only the finiteness check stands in its way.
  fieldbrain::test::write_forged_archive(path, tensors, {{"cycle", 9}});
  const std::string message = load_error(path);
  CHECK(message.find(path) != std::string::npos);
  CHECK(message.find("'weights'") != std::string::npos);
  CHECK(message.find("NaN or Inf") != std::string::npos);
  // The same file with the value finite loads: the refusal is about the value alone.
  tensors.at("weights")[3] = 1.0;
  fieldbrain::test::write_forged_archive(path, tensors, {{"cycle", 9}});
  CHECK(load_error(path).empty());
  fs::remove_all(dir);
}
