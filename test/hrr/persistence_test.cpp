// Saved vocabularies and item memories: round trip, readable by Python's torch.load, and
// refused when modified, bit-flipped or truncated; and the files old releases wrote.
#include "hrr/persistence.h"

#include "test/support/catch.h"
#include <cstring>
#include <filesystem>
#include <iterator>
#include <stdexcept>

#include "brain/plain_pickle.h"
#include "hrr/random_vectors.h"
#include "test/hrr/test_support.h"
#include "test/support/files.h"
#include "test/support/old_release_saves.h"
#include "test/support/pickle_archive.h"

using namespace fieldbrain::hrr;
using fieldbrain::hrr::test::ScratchDir;

namespace {

using fieldbrain::test::file_bytes;
using fieldbrain::test::write_file;

Vocabulary sample_vocabulary() {
  Vocabulary vocabulary(VocabularyOptions(256).seed(12345678901234567890ULL).unitary(true));
  vocabulary->add({"alpha", "beta", "gamma", "δέλτα"});
  return vocabulary;
}

// Offset of the first vector's bytes inside the file (the tensor data is stored raw).
std::size_t offset_of_vector_data(const std::vector<char>& file, const torch::Tensor& rows) {
  const torch::Tensor first = rows[0].contiguous();
  const char* needle = static_cast<const char*>(first.data_ptr());
  const auto at =
      std::search(file.begin(), file.end(), needle, needle + first.numel() * first.element_size());
  REQUIRE(at != file.end());
  return static_cast<std::size_t>(at - file.begin());
}

}  // namespace

TEST_CASE("vocabularies and item memories survive a save/load round trip", "[hrr]") {
  ScratchDir dir;
  Vocabulary saved = sample_vocabulary();
  save_vocabulary(saved, dir.file("vocab.pt"));
  Vocabulary loaded = load_vocabulary(dir.file("vocab.pt"));
  CHECK(loaded->names() == saved->names());
  CHECK(torch::equal(loaded->vectors(), saved->vectors()));
  CHECK(loaded->options().seed() == 12345678901234567890ULL);
  CHECK(loaded->options().unitary());
  // A loaded vocabulary keeps deriving new names the same way.
  CHECK(torch::equal(loaded->get("epsilon"), saved->get("epsilon")));

  torch::Generator gen = make_generator(3);
  ItemMemory memory(ItemMemoryOptions(64)
                        .dtype(torch::kFloat64)
                        .threshold(0.25)
                        .similarity(SimilarityKind::kDot));
  memory->add({"x", "y"}, random({2, 64}, gen, torch::kFloat64));
  save_item_memory(memory, dir.file("memory.pt"));
  save_item_memory(memory, dir.file("memory.pt"));  // overwriting is atomic too
  const ItemMemory back = load_item_memory(dir.file("memory.pt"));
  CHECK(back->labels() == memory->labels());
  CHECK(torch::equal(back->vectors(), memory->vectors()));
  CHECK(back->options().threshold() == 0.25);
  CHECK(back->options().similarity() == SimilarityKind::kDot);
  // Only the two saved files: no temp file is left behind.
  CHECK(std::distance(std::filesystem::directory_iterator(dir.path()),
                      std::filesystem::directory_iterator()) == 2);
}

TEST_CASE("Python's torch.load(weights_only=True) opens a saved vocabulary", "[hrr]") {
  ScratchDir dir;
  save_vocabulary(sample_vocabulary(), dir.file("vocab.pt"));
  const std::string command =
      fieldbrain::hrr::test::python() + " -c \"import torch; d = torch.load('" +
      dir.file("vocab.pt") + "', weights_only=True); print(d['format'], tuple(d['vectors'].shape), d['digest'][:7])\"";
  const auto result = fieldbrain::hrr::test::run_command(command);
  INFO(result.output);
  CHECK(result.exit_code == 0);
  CHECK(result.output.find("fieldbrain-hrr/vocabulary (4, 256) sha256:") != std::string::npos);
}

TEST_CASE("a modified, bit-flipped or truncated file is refused with a clear error", "[hrr]") {
  ScratchDir dir;
  const Vocabulary vocabulary = sample_vocabulary();
  const std::string path = dir.file("vocab.pt");
  save_vocabulary(vocabulary, path);
  const std::vector<char> original = file_bytes(path);

  SECTION("a vector changed consistently inside a valid archive fails the SHA-256 check") {
    torch::IValue content = torch::pickle_load(original);
    auto dict = content.toGenericDict();
    torch::Tensor vectors = dict.at("vectors").toTensor().clone();
    vectors[1][5] += 1e-3;
    dict.insert_or_assign("vectors", vectors);
    write_file(path, torch::pickle_save(content));
    CHECK_THROWS_WITH(load_vocabulary(path), Catch::Contains("SHA-256 integrity check failed"));
  }
  SECTION("metadata changed consistently fails the SHA-256 check") {
    torch::IValue content = torch::pickle_load(original);
    content.toGenericDict().insert_or_assign("unitary", false);
    write_file(path, torch::pickle_save(content));
    CHECK_THROWS_WITH(load_vocabulary(path), Catch::Contains("SHA-256 integrity check failed"));
  }
  SECTION("a malformed pickle program is refused before LibTorch runs it") {
    for (const auto& pickle : fieldbrain::test::bad_pickles()) {
      INFO(pickle.what);
      const std::string bytes = fieldbrain::test::archive_with_pickle(pickle.program);
      write_file(path, bytes);
      CHECK_THROWS_WITH(load_vocabulary(path),
                        Catch::Contains("refusing to load") && Catch::Contains(pickle.reason));
    }
  }
  SECTION("one flipped bit in the stored vectors") {
    std::vector<char> bytes = original;
    bytes[offset_of_vector_data(bytes, vocabulary->vectors()) + 13] ^= 0x10;
    write_file(path, bytes);
    CHECK_THROWS_WITH(load_vocabulary(path), Catch::Contains("refusing to load"));
  }
  SECTION("a flipped byte anywhere is refused or provably harmless, never a crash") {
    // Every 61st byte: zip headers, pickle stream, tensor data and the zip directory. Some
    // bytes carry no content (alignment padding, timestamps); flipping those may load, but
    // then names, vectors and options must be exactly the saved ones.
    int refused = 0, harmless = 0;
    for (std::size_t at = 0; at < original.size(); at += 61) {
      std::vector<char> bytes = original;
      bytes[at] = static_cast<char>(bytes[at] ^ 0xFF);
      write_file(path, bytes);
      INFO("flipped byte " << at << " of " << original.size());
      try {
        const Vocabulary loaded = load_vocabulary(path);
        CHECK(loaded->names() == vocabulary->names());
        CHECK(torch::equal(loaded->vectors(), vocabulary->vectors()));
        CHECK(loaded->options().seed() == vocabulary->options().seed());
        CHECK(loaded->options().unitary() == vocabulary->options().unitary());
        ++harmless;
      } catch (const std::runtime_error& error) {
        CHECK_THAT(error.what(), Catch::Contains("refusing to load"));
        ++refused;
      }
    }
    CHECK(refused > harmless);
  }
  SECTION("truncated files") {
    for (std::size_t keep :
         {std::size_t{0}, std::size_t{10}, original.size() / 2, original.size() - 1}) {
      write_file(path, std::vector<char>(original.begin(), original.begin() + keep));
      INFO("kept " << keep << " of " << original.size() << " bytes");
      CHECK_THROWS_WITH(load_vocabulary(path), Catch::Contains("refusing to load"));
    }
  }
  SECTION("the wrong kind of file, or no file") {
    CHECK_THROWS_WITH(load_item_memory(path), Catch::Contains("format is not"));
    CHECK_THROWS_WITH(load_vocabulary(dir.file("missing.pt")), Catch::Contains("cannot open"));
  }
}

// Files written by the releases that wrote each brain format (test/fixtures/saves/,
// scripts/make_old_saves.sh): v1 by the last release that wrote torch::pickle_save's
// type-tagged dicts, v2 and v3 by later ones (plain dicts). The expected names, vectors and
// options are what the old release recorded beside them (hrr-v<N>.json), not what today's
// code writes.
TEST_CASE("Vocabularies and item memories saved by old releases load with their digests verified "
          "and their vectors as saved",
          "[hrr][old-saves]") {
  using fieldbrain::test::matches_sidecar;
  for (const int version : fieldbrain::test::old_brain_versions()) {
    CAPTURE(version);
    const nlohmann::json sidecar =
        fieldbrain::test::old_save_sidecar("hrr-v" + std::to_string(version) + ".json");
    const nlohmann::json& v = sidecar.at("vocabulary");
    Vocabulary vocabulary =
        load_vocabulary(fieldbrain::test::old_save_path(v.at("file").get<std::string>()));
    CHECK(vocabulary->names() == v.at("names").get<std::vector<std::string>>());
    CHECK(matches_sidecar(vocabulary->vectors(), v.at("vectors")));
    CHECK(std::to_string(vocabulary->options().seed()) == v.at("seed").get<std::string>());
    CHECK(vocabulary->options().unitary() == v.at("unitary").get<bool>());
    // A name the old release derived after saving is derived the same way from the loaded file.
    const nlohmann::json& derived = v.at("derived_after_load");
    CHECK(matches_sidecar(vocabulary->get(derived.at("name").get<std::string>()),
                          derived.at("vector")));

    const nlohmann::json& m = sidecar.at("item_memory");
    const ItemMemory memory =
        load_item_memory(fieldbrain::test::old_save_path(m.at("file").get<std::string>()));
    CHECK(memory->labels() == m.at("labels").get<std::vector<std::string>>());
    CHECK(matches_sidecar(memory->vectors(), m.at("vectors")));
    CHECK(memory->options().threshold() == m.at("threshold").get<double>());
    CHECK(memory->options().similarity() == SimilarityKind::kDot);
  }
}

TEST_CASE("An old release's vocabulary changed consistently inside its archive fails its SHA-256",
          "[hrr][old-saves]") {
  ScratchDir dir;
  const std::string path = dir.file("changed.pt");
  for (const int version : fieldbrain::test::old_brain_versions()) {
    CAPTURE(version);
    const std::vector<char> original = file_bytes(
        fieldbrain::test::old_save_path("vocabulary-v" + std::to_string(version) + ".pt"));
    torch::IValue content = torch::pickle_load(original);
    auto dict = content.toGenericDict();
    torch::Tensor vectors = dict.at("vectors").toTensor().clone();
    vectors[2][7] += 1e-3;
    dict.insert_or_assign("vectors", vectors);
    // Written back in the dialect the release used: type-tagged for v1, plain dicts after.
    if (version == 1) {
      write_file(path, torch::pickle_save(content));
    } else {
      write_file(path, fieldbrain::pickle_save_plain(content));
    }
    CHECK_THROWS_WITH(load_vocabulary(path), Catch::Contains("SHA-256 integrity check failed"));
  }
}
