// Deterministic vocabularies: the same (seed, name) gives the same bits in any order, in any
// process (the CLI run twice) and in the independent Python derivation (parity_test.cpp).
#include "hrr/vocabulary.h"

#include "test/support/catch.h"
#include "test/support/skip.h"
#include <cmath>

#include "hrr/algebra.h"
#include "hrr/random_vectors.h"
#include "hrr/sha256.h"
#include "hrr/similarity.h"
#include "test/hrr/test_support.h"

using namespace fieldbrain::hrr;

TEST_CASE("a vocabulary derives the same vector for a name whatever the order", "[hrr]") {
  Vocabulary first(VocabularyOptions(512).seed(42));
  Vocabulary second(VocabularyOptions(512).seed(42));
  first->add({"cat", "dog", "bird"});
  second->add({"bird", "fish", "cat"});
  CHECK(torch::equal(first->get("cat"), second->get("cat")));
  CHECK(torch::equal(first->get("bird"), second->get("bird")));
  CHECK(first->size() == 3);
  CHECK(first->get("fish").sizes() == torch::IntArrayRef({512}));
  CHECK(first->size() == 4);  // get() adds
  CHECK(first->index_of("fish") == 3);
  CHECK(first->named_buffers()["vectors"].size(0) == 4);

  Vocabulary other_seed(VocabularyOptions(512).seed(43));
  CHECK_FALSE(torch::equal(other_seed->get("cat"), first->get("cat")));
  // Different names and seeds are unrelated: |cos| < 6/sqrt(D) (§3.7).
  CHECK(std::abs(cosine(first->get("cat"), first->get("dog")).item<double>()) <
        6.0 / std::sqrt(512.0));
  CHECK(std::abs(cosine(first->get("cat"), other_seed->get("cat")).item<double>()) <
        6.0 / std::sqrt(512.0));
}

TEST_CASE("unitary vocabularies hold unitary vectors; float64 matches float32", "[hrr]") {
  Vocabulary unitary(VocabularyOptions(255).seed(9).unitary(true));
  const torch::Tensor u = unitary->get("role");
  CHECK((torch::fft::rfft(u).abs() - 1.0).abs().max().item<double>() <= 1e-6);
  Vocabulary wide(VocabularyOptions(255).seed(9).unitary(true).dtype(torch::kFloat64));
  CHECK(torch::equal(wide->get("role").to(torch::kFloat32), u));
  CHECK_THROWS_AS(Vocabulary(VocabularyOptions(0)), std::invalid_argument);
}

TEST_CASE("named vectors are bit-identical across processes", "[hrr]") {
#ifndef FIELDBRAIN_HRR_CLI
  FIELDBRAIN_SKIP("fieldbrain-hrr CLI not built: no second process to compare with");
#else
  // The expected digest comes from the independent Python derivation, not from this code:
  //   python3 -c "import sys, hashlib; sys.path.insert(0, 'scripts/hrr'); import hrr_reference
  //   as h; print(hashlib.sha256(h.named_vector(7, 'apple', 512).numpy().tobytes()).hexdigest())"
  const std::string expected = "e1fe4366f3b5d933466364bb655a69e54a967a162dcd0d525e55cd198127b73d";
  const torch::Tensor here = named_vector(7, "apple", 512).contiguous();
  CHECK(to_hex(Sha256().update(here.data_ptr(), here.numel() * here.element_size()).finish()) ==
        expected);
  const std::string command =
      std::string(FIELDBRAIN_HRR_CLI) + " vector --seed 7 --name apple --dim 512";
  const auto run1 = fieldbrain::hrr::test::run_command(command);
  const auto run2 = fieldbrain::hrr::test::run_command(command);
  INFO(run1.output);
  REQUIRE(run1.exit_code == 0);
  REQUIRE(run2.exit_code == 0);
  CHECK(run1.output == run2.output);
  CHECK(run1.output.find("sha256:" + expected) != std::string::npos);
#endif
}
