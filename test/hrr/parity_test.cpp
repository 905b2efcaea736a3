// [parity]: the independent PyTorch reference (scripts/hrr/hrr_reference.py, full complex
// FFT) computes the same operations on the same inputs; agreement <= 1e-5 (docs/hrr.md). Inputs go
// to Python as a torch::pickle_save file, outputs come back as raw float64 files.
#include "test/support/catch.h"
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "hrr/algebra.h"
#include "hrr/item_memory.h"
#include "hrr/persistence.h"
#include "hrr/random_vectors.h"
#include "hrr/similarity.h"
#include "test/hrr/test_support.h"
#include "test/support/files.h"

using namespace fieldbrain::hrr;
using fieldbrain::hrr::test::ScratchDir;

namespace {

torch::Tensor read_output(const std::string& dir, const std::string& name,
                          const nlohmann::json& manifest) {
  std::vector<int64_t> shape = manifest.at("shapes").at(name).get<std::vector<int64_t>>();
  const std::vector<char> bytes = fieldbrain::test::file_bytes(dir + "/" + name + ".bin");
  torch::Tensor t = torch::empty(shape, torch::kFloat64);
  REQUIRE(bytes.size() == static_cast<std::size_t>(t.numel()) * sizeof(double));
  std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}

}  // namespace

TEST_CASE("the C++ HRR operations agree with the PyTorch reference to 1e-5", "[hrr][parity]") {
  ScratchDir dir;
  torch::Generator gen = make_generator(2024);
  const torch::Tensor a = random({4, 3, 512}, gen), b = random({4, 3, 512}, gen);
  const torch::Tensor a_odd = random({5, 511}, gen), b_odd = random({5, 511}, gen);
  const torch::Tensor a64 = random({2, 512}, gen, torch::kFloat64);
  const torch::Tensor b64 = random({2, 512}, gen, torch::kFloat64);
  const torch::Tensor permutation = random_permutation(512, gen);
  const torch::Tensor items = random({6, 4, 512}, gen);
  const torch::Tensor weights = torch::tensor({1.0f, -0.5f, 2.0f, 0.25f});
  const torch::Tensor codebook = random({200, 512}, gen);
  const std::vector<std::string> names = {"red", "green", "blue", "ünïcødé", ""};
  const int64_t seed = 77;

  c10::impl::GenericDict inputs(c10::StringType::get(), c10::AnyType::get());
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, torch::Tensor>>{{"a", a},
                                                          {"b", b},
                                                          {"a_odd", a_odd},
                                                          {"b_odd", b_odd},
                                                          {"a64", a64},
                                                          {"b64", b64},
                                                          {"permutation", permutation},
                                                          {"items", items},
                                                          {"weights", weights},
                                                          {"codebook", codebook}}) {
    inputs.insert(key, value);
  }
  c10::List<std::string> name_list;
  for (const auto& n : names) name_list.push_back(n);
  inputs.insert("names", torch::IValue(name_list));
  inputs.insert("seed", torch::IValue(seed));
  {
    const std::vector<char> bytes = torch::pickle_save(torch::IValue(inputs));
    std::ofstream(dir.file("inputs.pt"), std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  Vocabulary vocabulary(VocabularyOptions(128).seed(5).unitary(true));
  vocabulary->add({"one", "two", "three"});
  save_vocabulary(vocabulary, dir.file("vocab.pt"));

  const auto run = fieldbrain::hrr::test::run_command(
      fieldbrain::hrr::test::python() + " " + fieldbrain::hrr::test::hrr_script("parity.py") + " " +
      dir.file("inputs.pt") + " " + dir.path() + " " + dir.file("vocab.pt"));
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  nlohmann::json manifest;
  std::ifstream(dir.file("manifest.json")) >> manifest;

  ItemMemory memory(ItemMemoryOptions(512));
  std::vector<std::string> labels;
  for (int i = 0; i < 200; ++i) labels.push_back(std::to_string(i));
  memory->add(labels, codebook);
  const ItemQuery top = memory->query(a.reshape({-1, 512}), 5);

  std::vector<torch::Tensor> named, named_unitary;
  for (const auto& n : names) {
    named.push_back(named_vector(static_cast<uint64_t>(seed), n, 512));
    named_unitary.push_back(
        named_vector(static_cast<uint64_t>(seed), n, 255, true, torch::kFloat64));
  }

  const std::vector<std::pair<std::string, torch::Tensor>> ours = {
      {"bind", bind(a, b)},
      {"bind_odd", bind(a_odd, b_odd)},
      {"bind64", bind(a64, b64)},
      {"unbind", unbind(a, b)},
      {"unbind_odd", unbind(a_odd, b_odd)},
      {"involution", involution(a)},
      {"exact_inverse", exact_inverse(b)},
      {"make_unitary", make_unitary(a)},
      {"make_unitary_positive", make_unitary(a_odd, true)},
      {"power_half", power(make_unitary(a64, true), 0.5)},
      {"power_three", power(a64, 3.0)},
      {"permute", permute(a, 3)},
      {"permute_by", permute(a, permutation)},
      {"inverse_permute_by", inverse_permute(a, permutation)},
      {"bundle", bundle(items, weights)},
      {"bundle_normalized", bundle(items, weights, true)},
      {"cosine", cosine(a, b)},
      {"cleanup_scores", top.scores},
      {"named", torch::stack(named)},
      {"named_unitary", torch::stack(named_unitary)},
  };
  for (const auto& [name, tensor] : ours) {
    const torch::Tensor reference = read_output(dir.path(), name, manifest);
    INFO("operation " << name);
    REQUIRE(reference.sizes() == tensor.sizes());
    CHECK((tensor.to(torch::kFloat64) - reference).abs().max().item<double>() <= 1e-5);
  }
  CHECK(torch::equal(top.indices,
                     read_output(dir.path(), "cleanup_indices", manifest).to(torch::kInt64)));
  // The name -> vector scheme is pure integer hashing + libm, so it is bit-identical.
  CHECK(torch::equal(torch::stack(named).to(torch::kFloat64),
                     read_output(dir.path(), "named", manifest)));

  // Python recomputes the integrity digest of a saved file from its documented definition.
  const auto& v = manifest.at("vocabulary");
  CHECK(v.at("recomputed_digest") == v.at("stored_digest"));
  CHECK(v.at("names").get<std::vector<std::string>>() == vocabulary->names());
}
