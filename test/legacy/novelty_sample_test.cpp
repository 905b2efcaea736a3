// compute_novelty's sample of the field copied by a loop (brain/legacy/novelty_sample.h)
// against the port's ATen expression of the original's (slices, flatten, linspace, index):
// the same floats in the same order, for every size the cycle can have and strided fields.
#include "brain/legacy/novelty_sample.h"

#include <torch/torch.h>

#include <cstring>
#include <random>

#include "test/support/catch.h"
#include "test/support/test_seed.h"

// named, not anonymous: the suite is built as unity batches
namespace novelty_sample_test {

bool same_bits(const torch::Tensor& a_in, const torch::Tensor& b_in) {
  const torch::Tensor a = a_in.contiguous(), b = b_in.contiguous();
  return a.sizes() == b.sizes() &&
         std::memcmp(a.data_ptr<float>(), b.data_ptr<float>(),
                     static_cast<std::size_t>(a.numel()) * sizeof(float)) == 0;
}

// Every value distinct (its position in the field's memory, scrambled): a sample taken from
// the wrong place or in the wrong order cannot match by chance.
torch::Tensor numbered_field(std::mt19937_64& rng, at::IntArrayRef sizes) {
  torch::Tensor f = torch::empty(sizes, torch::kFloat32);
  std::uniform_real_distribution<float> jitter(0.0f, 0.5f);
  float* p = f.data_ptr<float>();
  for (int64_t i = 0; i < f.numel(); ++i) p[i] = static_cast<float>(i) + jitter(rng);
  return f;
}

}  // namespace novelty_sample_test

namespace nst = novelty_sample_test;
using fieldbrain::legacy::novelty_sample_aten;
using fieldbrain::legacy::NoveltySample;
using torch::indexing::Slice;

TEST_CASE("The novelty's field sample by a loop equals the ATen slices, linspace and index",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("novelty sample"));
  NoveltySample sample;  // one object for all: its indices follow the flat length
  int64_t fields = 0, differing = 0;
  for (int64_t R : {1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 24, 32})
    for (int64_t C : {48, 8, 5}) {
      const torch::Tensor f = nst::numbered_field(rng, {R, R, R, C + 16});
      ++fields;
      const torch::Tensor want = novelty_sample_aten(f, C);
      const torch::Tensor got = sample.take(f, C).clone();
      if (!nst::same_bits(got, want)) ++differing;
    }
  INFO(differing << " of " << fields << " samples differ");
  CHECK(differing == 0);
}

TEST_CASE("The novelty's field sample of a strided field equals the ATen expression's",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("novelty sample, strided"));
  NoveltySample sample;
  // a field inside a larger one, and one with its axes permuted: neither is contiguous
  const torch::Tensor big = nst::numbered_field(rng, {12, 11, 13, 70});
  const torch::Tensor inner = big.index({Slice(1, 10), Slice(2, 11), Slice(3, 12), Slice(2, 66)});
  CHECK(nst::same_bits(sample.take(inner, 48), novelty_sample_aten(inner, 48)));
  const torch::Tensor permuted = nst::numbered_field(rng, {9, 9, 9, 64}).permute({2, 0, 1, 3});
  CHECK(nst::same_bits(sample.take(permuted, 48), novelty_sample_aten(permuted, 48)));
  const torch::Tensor small = big.index({Slice(0, 3), Slice(0, 3), Slice(0, 3), Slice(0, 64)});
  CHECK(nst::same_bits(sample.take(small, 48), novelty_sample_aten(small, 48)));
}

TEST_CASE("The novelty's sample buffer is not overwritten while the caller still holds it",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("novelty sample buffer"));
  NoveltySample sample;
  const torch::Tensor a = nst::numbered_field(rng, {8, 8, 8, 64});
  const torch::Tensor b = nst::numbered_field(rng, {8, 8, 8, 64}) + 1e6;
  const torch::Tensor held = sample.take(a, 48);  // a second handle on the buffer
  const torch::Tensor copy = held.clone();
  sample.take(b, 48);
  CHECK(nst::same_bits(held, copy));
  CHECK(nst::same_bits(sample.take(b, 48), novelty_sample_aten(b, 48)));
}
