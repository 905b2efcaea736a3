// The hierarchy's pending update written into the field by loops (brain/legacy/
// field_blob_writes.h) against the original's `field[x0:x1, y0:y1, z0:z1, c] += value`
// written with ATen indexing: the same floats, bit for bit.
#include "brain/legacy/field_blob_writes.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "test/support/catch.h"
#include "test/support/test_seed.h"

// named, not anonymous: the suite is built as unity batches
namespace field_blob_writes_test {

using fieldbrain::legacy::FieldBlobWrite;

bool same_bits(const torch::Tensor& a_in, const torch::Tensor& b_in) {
  const torch::Tensor a = a_in.contiguous(), b = b_in.contiguous();
  return a.sizes() == b.sizes() &&
         std::memcmp(a.data_ptr<float>(), b.data_ptr<float>(),
                     static_cast<std::size_t>(a.numel()) * sizeof(float)) == 0;
}

torch::Tensor random_field(std::mt19937_64& rng, int64_t R, float scale) {
  torch::Tensor f = torch::empty({R, R, R, 64}, torch::kFloat32);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  float* p = f.data_ptr<float>();
  for (int64_t i = 0; i < f.numel(); ++i) p[i] = normal(rng) * scale;
  return f;
}

// Blobs inside an [R,R,R,64] field: empty ones, whole-axis ones and several on one channel
// (added in order) included; values from tiny to huge, the hierarchy's double products.
std::vector<FieldBlobWrite> random_blobs(std::mt19937_64& rng, int64_t R, int count) {
  std::uniform_int_distribution<int64_t> coord(0, R), channel(0, 63), pick(0, 9);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<FieldBlobWrite> blobs;
  for (int i = 0; i < count; ++i) {
    int64_t b[6];
    for (int k = 0; k < 6; k += 2) {
      const int64_t a = coord(rng), c = coord(rng);
      b[k] = std::min(a, c);
      b[k + 1] = pick(rng) == 0 ? b[k] : std::max(a, c);  // now and then an empty range
    }
    const double scale = std::pow(10.0, static_cast<double>(pick(rng)) - 5.0);
    blobs.push_back({b[0], b[1], b[2], b[3], b[4], b[5], pick(rng) < 3 ? 40 : channel(rng),
                     normal(rng) * scale * (1.0 + 1e-9)});
  }
  return blobs;
}

}  // namespace field_blob_writes_test

namespace fbt = field_blob_writes_test;
using fieldbrain::legacy::add_field_blobs;
using fieldbrain::legacy::add_field_blobs_aten;
using fieldbrain::legacy::FieldBlobWrite;

TEST_CASE("The field's blob writes by loops equal ATen's indexed add_ on random blobs",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("field blob writes"));
  int64_t fields = 0, differing = 0;
  for (int64_t R : {1, 3, 8, 16})
    for (float scale : {1.0f, 1e-4f, 1e4f})
      for (int trial = 0; trial < 25; ++trial) {
        const torch::Tensor start = fbt::random_field(rng, R, scale);
        const std::vector<FieldBlobWrite> blobs = fbt::random_blobs(rng, R, 1 + trial * 2);
        torch::Tensor got = start.clone(), want = start.clone();
        add_field_blobs(got, blobs);
        add_field_blobs_aten(want, blobs);
        ++fields;
        if (!fbt::same_bits(got, want)) ++differing;
      }
  INFO(differing << " of " << fields << " fields differ");
  CHECK(differing == 0);
}

TEST_CASE("The field's blob writes carry infinities and NaN as ATen's add_ does",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("field blob writes, non-finite"));
  const float inf = std::numeric_limits<float>::infinity();
  torch::Tensor start = fbt::random_field(rng, 4, 1.0f);
  start.index_put_({1, 1, 1, 3}, inf);
  start.index_put_({2, 2, 2, 3}, -inf);
  start.index_put_({0, 1, 2, 5}, std::nanf(""));
  const std::vector<FieldBlobWrite> blobs = {{0, 4, 0, 4, 0, 4, 3, 1.5},
                                             {0, 4, 0, 4, 0, 4, 5, -2.0},
                                             {0, 2, 0, 2, 0, 2, 7, static_cast<double>(inf)},
                                             {1, 3, 1, 3, 1, 3, 7, -static_cast<double>(inf)},
                                             {0, 4, 1, 2, 0, 4, 9, std::nan("")},
                                             {0, 1, 0, 1, 0, 1, 11, 1e300}};
  torch::Tensor got = start.clone(), want = start.clone();
  add_field_blobs(got, blobs);
  add_field_blobs_aten(want, blobs);
  // NaN compared as NaN (its payload is not a value the cycle reads), everything else by bits
  CHECK(torch::equal(torch::isnan(got), torch::isnan(want)));
  const torch::Tensor finite_or_inf = ~torch::isnan(want);
  CHECK(fbt::same_bits(got.index({finite_or_inf}), want.index({finite_or_inf})));
}

TEST_CASE("The field's blob writes on a strided field or past its edge do what ATen does",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("field blob writes, fallbacks"));
  // a field that is a strided view (the loops' direct path declines it)
  torch::Tensor big = fbt::random_field(rng, 6, 1.0f);
  torch::Tensor got_base = big.clone(), want_base = big.clone();
  torch::Tensor got = got_base.index(
      {torch::indexing::Slice(1, 5), torch::indexing::Slice(0, 4), torch::indexing::Slice(2, 6)});
  torch::Tensor want = want_base.index(
      {torch::indexing::Slice(1, 5), torch::indexing::Slice(0, 4), torch::indexing::Slice(2, 6)});
  const auto blobs = fbt::random_blobs(rng, 4, 12);
  add_field_blobs(got, blobs);
  add_field_blobs_aten(want, blobs);
  CHECK(fbt::same_bits(got_base, want_base));
  // a channel past the last: ATen's error, not a write outside the field
  torch::Tensor field = fbt::random_field(rng, 4, 1.0f);
  CHECK_THROWS(add_field_blobs(field, {{0, 2, 0, 2, 0, 2, 64, 1.0}}));
}
