// The legacy cycle's small reductions over field blocks and short vectors
// (brain/legacy/exact_block_sums.h), each against the ATen expression it replaces, bit for bit,
// over many blocks (every corner and edge of fields of several sizes, channel windows, scales,
// NaN and infinities): a stand-in that differs in one bit fails here, not as a drifted motor
// hundreds of cycles into a fixture.
#include <torch/torch.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "brain/legacy/exact_block_sums.h"
#include "test/support/catch.h"
#include "test/support/skip.h"
#include "test/support/test_seed.h"

// named, not anonymous: the suite is built as unity batches
namespace exact_block_sums_test {

using namespace fieldbrain::legacy;
using torch::indexing::Slice;

bool same_float_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A field of normal values times `scale` plus an offset (the cycle's fields hover around 0.05).
torch::Tensor random_field(std::mt19937_64& rng, std::array<int64_t, 4> sizes, float scale) {
  torch::Tensor f = torch::empty({sizes[0], sizes[1], sizes[2], sizes[3]}, torch::kFloat32);
  std::normal_distribution<float> normal(0.05f, 1.0f);
  float* p = f.data_ptr<float>();
  for (int64_t i = 0; i < f.numel(); ++i) p[i] = normal(rng) * scale;
  return f;
}

// Every block [x0:x0+lx, y0:y0+ly, z0:z0+lz, c0:c0+w] of the field the cycle's slices can make
// (centre +- 1 or 2, clipped at the edges), for the channel windows given; calls check(view).
template <typename Check>
void for_each_block(const torch::Tensor& f, std::vector<std::pair<int64_t, int64_t>> windows,
                    Check check) {
  const int64_t R = f.size(0);
  for (int64_t half : {1, 2})
    for (int64_t x = 0; x < R; ++x)
      for (int64_t y = 0; y < R; y += (y == 2 && R > 6 ? R - 5 : 1))
        for (int64_t z = 0; z < R; z += (z == 2 && R > 6 ? R - 5 : 1))
          for (const auto& [c0, w] : windows) {
            auto lo = [&](int64_t c) { return std::max<int64_t>(0, c - half); };
            auto hi = [&](int64_t c) { return std::min(R, c + half + 1); };
            check(f.index({Slice(lo(x), hi(x)), Slice(lo(y), hi(y)), Slice(lo(z), hi(z)),
                           Slice(c0, c0 + w)}));
          }
}

}  // namespace exact_block_sums_test

namespace bst = exact_block_sums_test;
using fieldbrain::legacy::FieldBlock;
using torch::indexing::Slice;

TEST_CASE("A field block's channel means equal torch.mean over its three spatial dims",
          "[legacy][exact]") {
  if (!fieldbrain::legacy::exact_block_means_available()) {
    FIELDBRAIN_SKIP("this LibTorch's reduction order differs: the cycle calls torch::mean");
    return;
  }
  std::mt19937_64 rng(fieldbrain::test::test_seed("block channel means"));
  int64_t blocks = 0, differing = 0;
  for (int64_t R : {3, 4, 5, 6, 7, 16})
    for (float scale : {1.0f, 1e-3f, 300.0f}) {
      const torch::Tensor f = bst::random_field(rng, {R, R, R, 64}, scale);
      bst::for_each_block(f, {{32, 16}, {0, 64}, {0, 8}, {40, 24}, {5, 17}},
                     [&](const torch::Tensor& view) {
                       const torch::Tensor want = torch::mean(view, {0, 1, 2}).contiguous();
                       float got[64];
                       fieldbrain::legacy::exact_block_channel_means(fieldbrain::legacy::field_block(view), got);
                       ++blocks;
                       for (int64_t c = 0; c < view.size(3); ++c)
                         if (!bst::same_float_bits(got[c], want.data_ptr<float>()[c])) {
                           ++differing;
                           break;
                         }
                     });
    }
  INFO(blocks << " blocks, " << differing << " with a channel that differs");
  CHECK(blocks > 20000);
  CHECK(differing == 0);
}

TEST_CASE("A field block's mean |value| equals torch.mean(torch.abs(block))", "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("block abs means"));
  int64_t blocks = 0, differing = 0;
  for (int64_t R : {3, 5, 16})
    for (float scale : {1.0f, 1e-4f, 1e4f}) {
      torch::Tensor f = bst::random_field(rng, {R, R, R, 64}, scale);
      if (R == 5) {  // signed zeros, a NaN and an infinity in one corner
        f.index_put_({0, 0, 0, 3}, -0.0f);
        f.index_put_({0, 0, 1, 5}, std::numeric_limits<float>::quiet_NaN());
        f.index_put_({0, 1, 0, 7}, -std::numeric_limits<float>::infinity());
      }
      bst::for_each_block(f, {{0, 64}, {32, 16}, {0, 8}, {3, 13}}, [&](const torch::Tensor& view) {
        const float want = torch::mean(torch::abs(view)).item<float>();
        const float got = fieldbrain::legacy::exact_block_abs_mean(fieldbrain::legacy::field_block(view));
        ++blocks;
        if (!bst::same_float_bits(got, want) && !(std::isnan(got) && std::isnan(want))) ++differing;
      });
    }
  INFO(blocks << " blocks, " << differing << " differ");
  CHECK(blocks > 5000);
  CHECK(differing == 0);
}

TEST_CASE("The mean |value| of a short vector equals torch.mean(torch.abs(x)) for every length",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("vector abs means"));
  int64_t checked = 0, differing = 0;
  for (int64_t n = 1; n <= 1100; ++n)
    for (float scale : {1.0f, 1e-6f, 1e6f}) {
      torch::Tensor x = bst::random_field(rng, {1, 1, 1, n}, scale).flatten();
      if (n % 7 == 0) x.index_put_({n / 2}, -0.0f);
      const float want = torch::mean(torch::abs(x)).item<float>();
      const float got = fieldbrain::legacy::exact_abs_mean(x.data_ptr<float>(), n);
      ++checked;
      if (!bst::same_float_bits(got, want)) ++differing;
    }
  INFO(checked << " vectors, " << differing << " differ");
  CHECK(differing == 0);
}

TEST_CASE("The column means of a stacked history equal torch.mean(torch.stack(rows), 0)",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("column means"));
  int64_t checked = 0, differing = 0;
  for (int64_t cols : {1, 3, 6, 7, 8, 12, 16, 17, 24, 31, 32, 33, 64, 70})
    for (int64_t rows = 1; rows <= 1000; rows += (rows < 130 ? 1 : 97)) {
      const torch::Tensor x = bst::random_field(rng, {1, 1, rows, cols}, 0.8f).view({rows, cols});
      std::vector<torch::Tensor> list;
      for (int64_t r = 0; r < rows; ++r) list.push_back(x[r].clone());
      const torch::Tensor want = torch::mean(torch::stack(list), 0).contiguous();
      std::vector<float> got(static_cast<std::size_t>(cols));
      fieldbrain::legacy::exact_column_means(x.data_ptr<float>(), rows, cols, got.data());
      ++checked;
      for (int64_t c = 0; c < cols; ++c)
        if (!bst::same_float_bits(got[c], want.data_ptr<float>()[c])) {
          ++differing;
          UNSCOPED_INFO("rows " << rows << " cols " << cols << " column " << c);
          break;
        }
    }
  INFO(checked << " histories, " << differing << " differ");
  CHECK(differing == 0);
}

TEST_CASE("A block's max |value| and a row's argmax |value| equal torch.max and torch.argmax",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("abs max and argmax"));
  int64_t checked = 0, differing = 0;
  for (int64_t R : {3, 7}) {
    torch::Tensor f = bst::random_field(rng, {R, R, R, 64}, 1.0f);
    // ties (equal magnitudes of both signs), zeros of both signs, a NaN in one voxel
    f.index_put_({0, 0, 0, Slice(0, 8)}, 0.5f);
    f.index_put_({0, 0, 0, 3}, -0.5f);
    f.index_put_({0, 1, 0, 5}, -0.0f);
    f.index_put_({1, 1, 1, 9}, std::numeric_limits<float>::quiet_NaN());
    f.index_put_({1, 1, 1, 2}, std::numeric_limits<float>::quiet_NaN());
    bst::for_each_block(f, {{0, 64}, {32, 16}}, [&](const torch::Tensor& view) {
      const float want = torch::max(torch::abs(view)).item<float>();
      const float got = fieldbrain::legacy::exact_block_abs_max(fieldbrain::legacy::field_block(view));
      ++checked;
      if (!bst::same_float_bits(got, want) && !(std::isnan(got) && std::isnan(want))) ++differing;
    });
    for (int64_t x = 0; x < R; ++x)
      for (int64_t y = 0; y < R; ++y)
        for (int64_t z = 0; z < R; ++z) {
          const torch::Tensor row = f.index({x, y, z, Slice()});
          const int64_t want = torch::argmax(torch::abs(row)).item<int64_t>();
          const int64_t got = fieldbrain::legacy::exact_abs_argmax(row.data_ptr<float>(), 64, 1);
          ++checked;
          if (got != want) ++differing;
        }
  }
  INFO(checked << " blocks and rows, " << differing << " differ");
  CHECK(differing == 0);
}

TEST_CASE("A field block's mean over every dim equals torch.mean of the block and of its planes",
          "[legacy][exact]") {
  if (!fieldbrain::legacy::exact_block_means_available()) {
    FIELDBRAIN_SKIP("this LibTorch's reduction order differs: the cycle calls torch::mean");
    return;
  }
  std::mt19937_64 rng(fieldbrain::test::test_seed("block means"));
  int64_t checked = 0, differing = 0;
  auto check = [&](const torch::Tensor& view) {
    const float want = torch::mean(view).item<float>();
    const float got = fieldbrain::legacy::exact_block_mean(fieldbrain::legacy::field_block(view));
    ++checked;
    if (!bst::same_float_bits(got, want)) ++differing;
  };
  for (int64_t R : {3, 4, 5, 8, 16, 32})
    for (float scale : {1.0f, 1e-3f, 300.0f}) {
      const torch::Tensor f = bst::random_field(rng, {R, R, R, 64}, scale);
      if (R <= 16) bst::for_each_block(f, {{0, 32}, {32, 16}, {0, 64}, {3, 9}}, check);
      // the motor generation's planes of the content: content[i], content[:, i], content[:, :, i]
      const torch::Tensor content = f.index({"...", Slice(0, 32)});
      for (int64_t i : {int64_t{0}, R / 2, R - 1}) {
        check(content.index({Slice(i, i + 1)}));
        check(content.index({Slice(), Slice(i, i + 1)}));
        check(content.index({Slice(), Slice(), Slice(i, i + 1)}));
      }
    }
  INFO(checked << " blocks, " << differing << " differ");
  CHECK(checked > 10000);
  CHECK(differing == 0);
}

TEST_CASE("all_finite says what torch.isfinite(x).all() says, wherever an inf or a NaN sits",
          "[legacy][exact]") {
  std::mt19937_64 rng(20261128);
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN()};
  int64_t finite_cases = 0, other_cases = 0;
  for (int64_t n : {1, 7, 8, 15, 16, 17, 1000, 32768 + 3}) {
    torch::Tensor x = bst::random_field(rng, {n, 1, 1, 1}, 1.0f).reshape({n});
    float* p = x.data_ptr<float>();
    // finite extremes stay finite
    p[0] = std::numeric_limits<float>::max();
    if (n > 1) p[n - 1] = -std::numeric_limits<float>::denorm_min();
    CHECK(fieldbrain::legacy::all_finite(p, n) == torch::isfinite(x).all().item<bool>());
    CHECK(fieldbrain::legacy::all_finite(p, n));
    ++finite_cases;
    for (const float special : specials) {
      for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
        const float kept = p[at];
        p[at] = special;
        CHECK(fieldbrain::legacy::all_finite(p, n) == torch::isfinite(x).all().item<bool>());
        CHECK_FALSE(fieldbrain::legacy::all_finite(p, n));
        p[at] = kept;
        ++other_cases;
      }
    }
  }
  CHECK(finite_cases == 8);
  CHECK(other_cases == 8 * 4 * 3);
}

// the same float, or both NaN (a NaN's sign and payload are not the cycle's business: the
// original's 1 / (std + 1e-6) is NaN either way)
static bool same_or_both_nan(float got, float want) {
  return bst::same_float_bits(got, want) || (std::isnan(got) && std::isnan(want));
}

TEST_CASE("A field block's standard deviation equals torch.std of the block", "[legacy][exact]") {
  if (!fieldbrain::legacy::exact_block_std_available()) {
    FIELDBRAIN_SKIP("this LibTorch's std differs from its two-pass order: the cycle calls torch::std");
    return;
  }
  std::mt19937_64 rng(fieldbrain::test::test_seed("block std"));
  int64_t checked = 0, differing = 0;
  auto check = [&](const torch::Tensor& view) {
    const float want = torch::std(view).item<float>();
    const float got = fieldbrain::legacy::exact_block_std(fieldbrain::legacy::field_block(view));
    ++checked;
    if (!same_or_both_nan(got, want)) ++differing;
  };
  for (int64_t R : {3, 4, 5, 8, 16})
    for (float scale : {1.0f, 1e-3f, 300.0f, 1e25f}) {
      torch::Tensor f = bst::random_field(rng, {R, R, R, 64}, scale);
      bst::for_each_block(f, {{0, 32}, {32, 16}, {0, 64}, {3, 9}}, check);
      if (R == 8 && scale == 1.0f) {
        // constant stretches (zero variance), then an inf and a NaN somewhere in the field
        f.index_put_({Slice(0, 4)}, 0.25f);
        bst::for_each_block(f, {{0, 16}}, check);
        f.index_put_({5, 5, 5, 7}, std::numeric_limits<float>::infinity());
        f.index_put_({1, 6, 2, 3}, std::numeric_limits<float>::quiet_NaN());
        bst::for_each_block(f, {{0, 16}}, check);
      }
    }
  // a block big enough for ATen to share among threads: torch::std's own answer
  const torch::Tensor big = bst::random_field(rng, {9, 9, 9, 64}, 1.0f);
  check(big);
  INFO(checked << " blocks, " << differing << " differ");
  CHECK(checked > 10000);
  CHECK(differing == 0);
}

TEST_CASE("The mean |difference| along each dim of a block equals torch.diff's, as the coherence "
          "takes it",
          "[legacy][exact]") {
  std::mt19937_64 rng(fieldbrain::test::test_seed("block diffs"));
  int64_t checked = 0, differing = 0;
  auto check = [&](const torch::Tensor& view) {
    const fieldbrain::legacy::FieldBlock block = fieldbrain::legacy::field_block(view);
    for (int dim = 0; dim < 3; ++dim) {
      // the original: torch.diff where the dim has two planes or more, zeros_like(one plane) else
      const torch::Tensor g = view.size(dim) > 1 ? torch::diff(view, 1, dim)
                                                 : torch::zeros_like(view.narrow(dim, 0, 1));
      const float want = torch::mean(torch::abs(g)).item<float>();
      const float got = fieldbrain::legacy::exact_block_diff_abs_mean(block, dim);
      ++checked;
      if (!same_or_both_nan(got, want)) ++differing;
    }
  };
  for (int64_t R : {1, 2, 3, 5, 8, 16})
    for (float scale : {1.0f, 1e-3f, 300.0f}) {
      torch::Tensor f = bst::random_field(rng, {R, R, R, 64}, scale);
      bst::for_each_block(f, {{0, 32}, {32, 16}, {0, 64}, {3, 9}}, check);
      if (R == 8 && scale == 1.0f) {
        f.index_put_({5, 5, 5, 7}, std::numeric_limits<float>::infinity());
        f.index_put_({1, 6, 2, 3}, std::numeric_limits<float>::quiet_NaN());
        bst::for_each_block(f, {{0, 16}}, check);
      }
    }
  INFO(checked << " differences, " << differing << " differ");
  CHECK(checked > 30000);
  CHECK(differing == 0);
}

TEST_CASE("The cosine similarity of two vectors equals torch.cosine_similarity, single and batched",
          "[legacy][exact]") {
  if (!fieldbrain::legacy::exact_cosine_available()) {
    FIELDBRAIN_SKIP("this LibTorch's cosine_similarity takes another norm: the cycle calls it");
    return;
  }
  std::mt19937_64 rng(fieldbrain::test::test_seed("cosine"));
  int64_t checked = 0, differing = 0;
  for (int64_t n = 1; n <= 300; n += (n < 140 ? 1 : 7))
    for (float scale : {1.0f, 1e-4f, 1e-20f, 30.0f, 1e18f}) {
      // eight rows: random, one of zeros, one a copy of the first, one its negation
      torch::Tensor rows = bst::random_field(rng, {8, n, 1, 1}, scale).reshape({8, n});
      rows[2].zero_();
      rows[3].copy_(rows[0]);
      rows[4].copy_(-rows[0]);
      const torch::Tensor batched =
          torch::cosine_similarity(rows[0].unsqueeze(0), rows.narrow(0, 1, 7), 1).contiguous();
      const float* r = rows.data_ptr<float>();
      for (int64_t k = 1; k < 8; ++k) {
        const float single =
            torch::cosine_similarity(rows[0].unsqueeze(0), rows[k].unsqueeze(0), 1).item<float>();
        const float got = fieldbrain::legacy::exact_cosine_similarity(r, r + k * n, n);
        checked += 2;
        if (!same_or_both_nan(got, single)) ++differing;
        if (!same_or_both_nan(got, batched.data_ptr<float>()[k - 1])) ++differing;
      }
    }
  // the salient patterns' shapes: field[x-2:x+3, y-2:y+3, z-2:z+3, c] normalised, flattened
  const torch::Tensor f = bst::random_field(rng, {16, 16, 16, 4}, 1.0f);
  for (int64_t x : {0, 1, 7, 15})
    for (int64_t y : {0, 2, 14}) {
      const auto lo = [](int64_t c) { return std::max<int64_t>(0, c - 2); };
      const auto hi = [](int64_t c) { return std::min<int64_t>(16, c + 3); };
      torch::Tensor p1 = f.index({Slice(lo(x), hi(x)), Slice(lo(y), hi(y)), Slice(3, 8), 1});
      torch::Tensor p2 = f.index({Slice(lo(x), hi(x)), Slice(lo(y), hi(y)), Slice(9, 14), 2});
      p1 = p1 / (torch::norm(p1) + 1e-8);
      p2 = p2 / (torch::norm(p2) + 1e-8);
      const float want =
          torch::cosine_similarity(p1.flatten().unsqueeze(0), p2.flatten().unsqueeze(0))
              .item<float>();
      const float got = fieldbrain::legacy::exact_cosine_similarity(
          p1.data_ptr<float>(), p2.data_ptr<float>(), p1.numel());
      ++checked;
      if (!same_or_both_nan(got, want)) ++differing;
    }
  INFO(checked << " similarities, " << differing << " differ");
  CHECK(checked > 10000);
  CHECK(differing == 0);
}

TEST_CASE("A salient pattern normalised in place equals field[block, c] / (torch.norm + 1e-8)",
          "[legacy][exact]") {
  if (!fieldbrain::legacy::exact_normalised_channel_available()) {
    FIELDBRAIN_SKIP("this LibTorch's norm takes another order: the cycle calls torch::norm");
    return;
  }
  std::mt19937_64 rng(fieldbrain::test::test_seed("normalised channel"));
  int64_t checked = 0, differing = 0;
  std::vector<float> got(125);
  auto check = [&](const torch::Tensor& view) {
    const fieldbrain::legacy::FieldBlock block = fieldbrain::legacy::field_block(view);
    for (int64_t c = 0; c < view.size(3); c += 5) {
      const torch::Tensor channel = view.index({"...", c});
      const torch::Tensor want = (channel / (torch::norm(channel) + 1e-8)).contiguous();
      fieldbrain::legacy::exact_normalised_channel(block, c, got.data());
      const float* w = want.data_ptr<float>();
      ++checked;
      for (int64_t i = 0; i < want.numel(); ++i)
        if (!same_or_both_nan(got[i], w[i])) {
          ++differing;
          break;
        }
    }
  };
  for (int64_t R : {3, 5, 8, 16})
    for (float scale : {1.0f, 1e-3f, 300.0f, 1e-22f, 1e17f}) {
      torch::Tensor f = bst::random_field(rng, {R, R, R, 64}, scale);
      bst::for_each_block(f, {{0, 64}, {3, 9}}, check);
      if (R == 8 && scale == 1.0f) {
        // a zero neighbourhood (the norm 0, the + 1e-8 alone), an inf, a NaN
        f.index_put_({Slice(0, 4)}, 0.0f);
        bst::for_each_block(f, {{0, 16}}, check);
        f.index_put_({5, 5, 5, 5}, std::numeric_limits<float>::infinity());
        f.index_put_({1, 6, 2, 10}, std::numeric_limits<float>::quiet_NaN());
        bst::for_each_block(f, {{0, 16}}, check);
      }
    }
  INFO(checked << " patterns, " << differing << " differ");
  CHECK(checked > 10000);
  CHECK(differing == 0);
}
