// Role-filler records and sequences decode through clean-up.
#include "hrr/structures.h"

#include "test/support/catch.h"

#include "hrr/algebra.h"
#include "hrr/item_memory.h"
#include "hrr/random_vectors.h"
#include "hrr/vocabulary.h"

using namespace fieldbrain::hrr;

namespace {

constexpr int64_t kDim = 512;

ItemMemory memory_of(Vocabulary& vocabulary, const std::vector<std::string>& names) {
  vocabulary->add(names);
  ItemMemory memory{ItemMemoryOptions(kDim)};
  memory->add(vocabulary->names(), vocabulary->vectors());
  return memory;
}

std::vector<std::string> numbered(const std::string& stem, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back(stem + std::to_string(i));
  return out;
}

}  // namespace

TEST_CASE("a role-filler record returns each filler through clean-up", "[hrr]") {
  Vocabulary fillers(VocabularyOptions(kDim).seed(3));
  ItemMemory memory = memory_of(fillers, numbered("filler", 100));
  Vocabulary roles(VocabularyOptions(kDim).seed(4).unitary(true));
  const std::vector<std::string> role_names = {"colour", "shape", "size", "place", "owner"};
  roles->add(role_names);
  const std::vector<std::string> chosen = {"filler3", "filler41", "filler7", "filler99", "filler0"};
  std::vector<torch::Tensor> filler_rows;
  for (const auto& n : chosen) filler_rows.push_back(fillers->get(n));
  const torch::Tensor record = encode_record(roles->vectors(), torch::stack(filler_rows));
  REQUIRE(record.sizes() == torch::IntArrayRef({kDim}));
  // Five pairs is far inside the ~15-20 pair capacity at D = 512 (§3.5).
  const ItemQuery answer = memory->cleanup(query_record(record, roles->vectors()));
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    CHECK(memory->label(answer.indices[static_cast<int64_t>(i)].item<int64_t>()) == chosen[i]);
  }
}

TEST_CASE("sequences bound by position powers or by a permutation decode in order", "[hrr]") {
  Vocabulary words(VocabularyOptions(kDim).seed(5));
  ItemMemory memory = memory_of(words, numbered("word", 200));
  const std::vector<int64_t> order = {17, 3, 150, 42, 42, 8};  // repeats are allowed
  std::vector<torch::Tensor> rows;
  for (int64_t i : order) rows.push_back(words->vectors()[i]);
  const torch::Tensor items = torch::stack(rows);  // [L, D]
  torch::Generator gen = make_generator(6);

  SECTION("position vector powers") {
    const torch::Tensor position = random_unitary({kDim}, gen);
    const torch::Tensor sequence = encode_sequence_by_position(items, position);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const torch::Tensor item =
          decode_sequence_by_position(sequence, position, static_cast<int64_t>(i));
      CHECK(memory->cleanup(item).indices.item<int64_t>() == order[i]);
    }
  }
  SECTION("fixed random permutation") {
    const torch::Tensor permutation = random_permutation(kDim, gen);
    const torch::Tensor sequence = encode_sequence_by_permutation(items, permutation);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const torch::Tensor item =
          decode_sequence_by_permutation(sequence, permutation, static_cast<int64_t>(i));
      CHECK(memory->cleanup(item).indices.item<int64_t>() == order[i]);
    }
  }
  SECTION("batched: several sequences at once") {
    const torch::Tensor position = random_unitary({kDim}, gen);
    const torch::Tensor batch = torch::stack({items, items.flip({0})});  // [2, L, D]
    const torch::Tensor sequences = encode_sequence_by_position(batch, position);
    REQUIRE(sequences.sizes() == torch::IntArrayRef({2, kDim}));
    const torch::Tensor first = decode_sequence_by_position(sequences, position, 0);
    const ItemQuery answer = memory->cleanup(first);
    CHECK(answer.indices[0].item<int64_t>() == order.front());
    CHECK(answer.indices[1].item<int64_t>() == order.back());
  }
}
