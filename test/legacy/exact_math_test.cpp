// The legacy profile's exact stand-ins for work ATen does per value (brain/legacy/aten_sums.h,
// field_loops.h), each against the ATen or IEEE operation it replaces, bit for bit, over many
// inputs (edge values included): a stand-in that differs in one bit fails here, not as a
// drifted motor hundreds of cycles into a fixture.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "brain/legacy/aten_sums.h"
#include "brain/legacy/exact_dot.h"
#include "brain/legacy/exact_normal.h"
#include "brain/legacy/exact_tanh.h"
#include "brain/legacy/field_loops.h"
#include "test/support/catch.h"
#include "test/support/cpu_kernels.h"
#include "test/support/skip.h"

namespace {

using namespace fieldbrain::legacy;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A double of every sign and of exponents over the range Welford's deltas take (differences of
// float-valued doubles: from float's smallest subnormal times 2^-53 to float's largest).
double random_delta(std::mt19937_64& rng) {
  uint64_t bits = rng();
  const uint64_t exponent = 1023 - 220 + rng() % 350;
  bits = (bits & 0x800FFFFFFFFFFFFFull) | (exponent << 52);
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

}  // namespace

TEST_CASE("Welford's quotient without a division equals the division for every count",
          "[legacy][exact]") {
  std::mt19937_64 rng(20261128);
  int64_t checked = 0, differing = 0;
  for (int64_t n = 1; n <= 64; ++n) {
    const auto nf = static_cast<double>(n);
    std::vector<double> deltas = {0.0, -0.0, 1.0, -1.0, 3.0, 1.0 / 3.0, 0x1.fffffffffffffp-1,
                                  static_cast<double>(std::numeric_limits<float>::max()),
                                  static_cast<double>(std::numeric_limits<float>::denorm_min()),
                                  static_cast<double>(std::numeric_limits<float>::min())};
    for (int i = 0; i < 200000; ++i) deltas.push_back(random_delta(rng));
    // the differences of nearby floats and double means, as the walk makes them
    for (int i = 0; i < 50000; ++i) {
      const auto v = static_cast<double>(static_cast<float>(random_delta(rng)));
      deltas.push_back(v - v * (1.0 + static_cast<double>(rng() % 1000) * 0x1p-52));
    }
    for (double d : deltas) {
      ++checked;
      if (!same_bits(welford_quotient(d, n), d / nf)) ++differing;
    }
  }
  INFO(checked << " quotients checked");
  CHECK(checked > 10000000);
  CHECK(differing == 0);
}

TEST_CASE("The row variances equal torch.var on rows with large, tiny and non-finite values",
          "[legacy][exact]") {
  at::set_num_threads(1);
  torch::manual_seed(31);
  const int64_t rows = 4099, C = 64;
  for (double scale : {1e-30, 1e-3, 1.0, 1e4, 1e30}) {
    INFO("scale " << scale);
    torch::Tensor x = torch::randn({rows, C}) * scale + 0.25 * scale;
    float* p = x.data_ptr<float>();
    p[17 * C + 3] = std::numeric_limits<float>::infinity();
    p[40 * C + 9] = std::numeric_limits<float>::quiet_NaN();
    p[77 * C + 0] = -std::numeric_limits<float>::infinity();
    for (int64_t n : {2, 4, 12, 47, 48, 64}) {
      INFO("n " << n);
      torch::Tensor expected =
          torch::var(x.index({"...", torch::indexing::Slice(0, n)}), at::IntArrayRef{-1}, true,
                     false)
              .contiguous();
      std::vector<float> out(static_cast<size_t>(rows));
      aten_row_vars(p, rows, C, n, out.data());
      CHECK(std::memcmp(out.data(), expected.data_ptr<float>(), sizeof(float) * rows) == 0);
    }
  }
}

TEST_CASE("The exact normal fill equals at::normal_ and leaves the generator as ATen leaves it",
          "[legacy][exact]") {
  at::set_num_threads(1);
  const std::string capability = fieldbrain::test::aten_cpu_kernels();
  // written from LibTorch 1.13's AVX2 kernel: there it must be taken; elsewhere it may decline
  // (the brain then draws with ATen), as the probe decides
  if (capability == "avx2" && TORCH_VERSION_MAJOR == 1) REQUIRE(exact_normal_available());
  if (!exact_normal_available())
    FIELDBRAIN_SKIP("ATen CPU capability " << capability
                                           << ": the exact normal fill declines, ATen draws");
  int64_t values = 0;
  std::mt19937_64 rng(7);
  for (int run = 0; run < 60; ++run) {
    // sizes around ATen's blocks of 16 and the engine's 624 words, and the field's
    int64_t n = 16 + static_cast<int64_t>(rng() % 3000);
    if (run % 10 == 0) n = 16 * 16 * 16 * 48;
    if (run % 10 == 1) n = 624 * 3;
    const double mean = run % 3 == 0 ? 0.0 : static_cast<double>(rng() % 100) / 37.0 - 1.0;
    const double std = run % 3 == 0 ? 1.0 : static_cast<double>(rng() % 100 + 1) / 23.0;
    const uint64_t seed = rng();
    at::Generator ours = at::make_generator<at::CPUGeneratorImpl>(seed);
    at::Generator theirs = at::make_generator<at::CPUGeneratorImpl>(seed);
    // start anywhere in the engine's block, and after a per-element normal (its spare kept)
    const int64_t skip = static_cast<int64_t>(rng() % 700) + 1;
    for (at::Generator* g : {&ours, &theirs}) {
      torch::empty({skip}).uniform_(0, 1, *g);
      at::randn({3}, *g, torch::kFloat32);
    }
    INFO("n " << n << ", mean " << mean << ", std " << std << ", skipped " << skip);
    torch::Tensor a = torch::empty({n}, torch::kFloat32);
    REQUIRE(exact_normal_fill(a.data_ptr<float>(), n, mean, std, ours));
    torch::Tensor b = torch::empty({n}, torch::kFloat32).normal_(mean, std, theirs);
    CHECK(std::memcmp(a.data_ptr<float>(), b.data_ptr<float>(), sizeof(float) * n) == 0);
    CHECK(torch::equal(ours.get_state(), theirs.get_state()));
    // and the next draws of both generators agree (state handed back whole)
    CHECK(torch::equal(at::randn({5}, ours, torch::kFloat32), at::randn({5}, theirs, torch::kFloat32)));
    values += n;
  }
  INFO(values << " normals compared");
  CHECK(values > 1000000);
  // fewer than 16 values: ATen's per-element path, not this one
  float few[15];
  at::Generator g = at::make_generator<at::CPUGeneratorImpl>(3);
  CHECK_FALSE(exact_normal_fill(few, 15, 0.0, 1.0, g));
}

TEST_CASE("The field state's abs sum and variance in one walk equal torch's abs().sum() and var()",
          "[legacy][exact]") {
  at::set_num_threads(1);
  torch::manual_seed(41);
  for (int64_t R : {5, 12, 32}) {
    const int64_t V = R * R * R;
    torch::Tensor field = torch::randn({R, R, R, 64}) * 0.7 + 0.02;
    for (int64_t channels : {32, 48}) {
      INFO("R " << R << ", channels " << channels);
      torch::Tensor content = field.index({"...", torch::indexing::Slice(0, channels)});
      const ContentSums sums = content_abs_sum_and_var(field.data_ptr<float>(), V, 64, channels);
      CHECK(sums.abs_sum == content.abs().sum().item<float>());
      CHECK(sums.abs_sum / static_cast<float>(V * channels) == content.abs().mean().item<float>());
      CHECK(sums.variance == torch::var(content).item<float>());
    }
  }
}

namespace {

// The field variance's sum as ATen makes it: one double addition after another in memory order.
double squares_one_by_one(double s, const float* x, int64_t rows, int64_t stride, int64_t n,
                          double mean) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; ++c) {
      const double d = static_cast<double>(x[r * stride + c]) - mean;
      s = s + d * d;
    }
  return s;
}

}  // namespace

TEST_CASE("The sum of squares taken on its binade's grid equals the value-by-value double sum",
          "[legacy][exact]") {
  std::mt19937 rng(20261129);
  int64_t sums = 0, differing = 0;
  const auto check = [&](const std::vector<float>& x, int64_t rows, int64_t stride, int64_t n,
                         double start, double mean) {
    const double expected = squares_one_by_one(start, x.data(), rows, stride, n, mean);
    const double ours = ordered_square_sum(start, x.data(), rows, stride, n, mean);
    ++sums;
    if (!same_bits(expected, ours)) ++differing;
  };
  for (int64_t rows : {1, 3, 4, 5, 85, 1000}) {
    for (int64_t n : {8, 32, 48, 64, 13}) {  // 13: no grid (not whole vectors)
      const int64_t stride = 64;
      std::vector<float> x(static_cast<size_t>(rows * stride));
      for (double scale : {1e-30, 1e-6, 0.7, 1.0, 1e6, 1e30}) {
        std::normal_distribution<float> normal(0.0f, static_cast<float>(scale));
        for (float& v : x) v = normal(rng) + static_cast<float>(0.02 * scale);
        for (double start : {0.0, 1e-300, 0.5 * scale * scale, 1e5 * scale * scale, 1e300}) {
          check(x, rows, stride, n, start, 0.02 * scale);
          check(x, rows, stride, n, start, static_cast<double>(static_cast<float>(0.01 * scale)));
        }
      }
      // integers: once the sum passes 2^53 its grid is 2, 4, ...: odd squares are exact ties
      // (round-half-even by the sum's last bit) and steps cross binades often
      std::uniform_int_distribution<int> big(0, (1 << 21) - 1), small(0, 15);
      for (float& v : x) v = static_cast<float>(big(rng));
      for (double start : {0.0, 0x1p53, 0x1p53 + 2.0, 0x1p60 - 64.0, 0x1.fffffffffffffp52})
        check(x, rows, stride, n, start, 0.0);
      for (float& v : x) v = static_cast<float>(small(rng));
      for (double start : {0x1p53, 0x1p54 + 4.0, 0x1p55 - 8.0, 0x1p56})
        check(x, rows, stride, n, start, 0.0);
      // non-finite values and means: NaN or inf from there on, as the sequence gives
      std::normal_distribution<float> normal(0.0f, 1.0f);
      for (float& v : x) v = normal(rng);
      x[static_cast<size_t>((rows / 2) * stride + 1)] = std::numeric_limits<float>::infinity();
      check(x, rows, stride, n, 1.0, 0.0);
      x[static_cast<size_t>((rows / 2) * stride + 1)] = std::numeric_limits<float>::quiet_NaN();
      check(x, rows, stride, n, 1.0, 0.0);
      check(x, rows, stride, n, 1.0, std::numeric_limits<double>::quiet_NaN());
      check(x, rows, stride, n, std::numeric_limits<double>::infinity(), 0.0);
    }
  }
  // the field's own sizes, R 32: the sum the cycle takes
  torch::manual_seed(43);
  torch::Tensor field = torch::randn({32 * 32 * 32, 64}) * 0.4 + 0.01;
  std::vector<float> f(field.data_ptr<float>(), field.data_ptr<float>() + field.numel());
  check(f, 32 * 32 * 32, 64, 48, 0.0, 0.01);
  INFO(sums << " sums compared");
  CHECK(differing == 0);
}

TEST_CASE("The exact tanh equals at::tanh on random bit patterns, the cycle's range and rows",
          "[legacy][exact]") {
  at::set_num_threads(1);
  const std::string capability = fieldbrain::test::aten_cpu_kernels();
  // written for LibTorch 1.13's vectorised tanh (AVX2 and AVX-512 give the same values): there
  // it must be taken; elsewhere it may decline (the brain then calls at::tanh), as the probe
  // decides
  if ((capability == "avx2" || capability == "avx512") && TORCH_VERSION_MAJOR == 1)
    REQUIRE(exact_tanh_available());
  if (!exact_tanh_available())
    FIELDBRAIN_SKIP("ATen CPU capability " << capability
                                           << ": the exact tanh declines, ATen's tanh is taken");
  std::mt19937 rng(20261128);
  const int64_t n = int64_t{1} << 24;
  torch::Tensor x = torch::empty({n}, torch::kFloat32);
  float* p = x.data_ptr<float>();
  std::uniform_real_distribution<float> wide(-10.0f, 10.0f), narrow(-1.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    switch (i % 4) {
      case 0: {  // any float: NaNs, subnormals, infinities
        const auto bits = static_cast<uint32_t>(rng());
        std::memcpy(p + i, &bits, sizeof bits);
        break;
      }
      case 1: p[i] = wide(rng); break;                        // past 8.66: the result 1
      case 2: p[i] = narrow(rng); break;                      // the field's values
      default: p[i] = narrow(rng) * 1e-3f; break;             // near 0
    }
  }
  // the edges and the two inputs that tell one addition's order apart
  const float edges[] = {0.0f, -0.0f, 8.664339742f, -8.664339742f, 0x1.8bd194p+2f,
                         -0x1.8bd194p+2f, std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity(),
                         std::numeric_limits<float>::denorm_min(), 1e-30f, 20.0f, -0.5f};
  std::memcpy(p, edges, sizeof edges);
  const torch::Tensor expected = at::tanh(x);
  // an odd count: the tail of the last vector too
  torch::Tensor ours = x.narrow(0, 0, n - 3).clone();
  exact_tanh_inplace(ours.data_ptr<float>(), ours.numel());
  CHECK(std::memcmp(ours.data_ptr<float>(), expected.data_ptr<float>(),
                    sizeof(float) * static_cast<size_t>(n - 3)) == 0);
  // rows: the first 48 of 64 channels in place (the content's tanh), the rest untouched
  torch::Tensor field = x.narrow(0, 0, 64 * 4096).view({4096, 64}).clone();
  torch::Tensor expected_field = field.clone();
  expected_field.index({"...", torch::indexing::Slice(0, 48)}).tanh_();
  exact_tanh_rows_inplace(field.data_ptr<float>(), 4096, 64, 48);
  CHECK(std::memcmp(field.data_ptr<float>(), expected_field.data_ptr<float>(),
                    sizeof(float) * 64 * 4096) == 0);
}

TEST_CASE("The exact tanh of whole vectors of small values equals at::tanh",
          "[legacy][exact]") {
  // the field's values are mostly small: a vector whose eight |values| are all below 0.34
  // takes the short path (exp_pair_small); every 127th float below 0.34 of both signs, the
  // floats around 0.34, and random values below it, in vectors of eight
  at::set_num_threads(1);
  if (!exact_tanh_available())
    FIELDBRAIN_SKIP("the exact tanh declines here: ATen's tanh is taken");
  std::vector<float> in;
  uint32_t top;
  const float bound = 0.34f;
  std::memcpy(&top, &bound, sizeof top);
  for (uint32_t b = 0; b < top; b += 127) {
    float v;
    std::memcpy(&v, &b, sizeof v);
    in.push_back(v);
    in.push_back(-v);
  }
  float near = std::nextafter(bound, 0.0f);
  for (int k = 0; k < 4096; ++k, near = std::nextafter(near, 0.0f))
    in.push_back(k % 2 == 0 ? near : -near);
  std::mt19937 rng(20261130);
  std::uniform_real_distribution<float> below(-0.3399f, 0.3399f);
  for (int i = 0; i < 1000000; ++i) in.push_back(below(rng) * (i % 3 == 0 ? 1e-3f : 1.0f));
  // and one vector in many with a lane at or past the bound (the whole path for it)
  for (size_t i = 5; i < in.size(); i += 8 * 97) in[i] = i % 2 == 0 ? bound : -0.5f;
  while (in.size() % 8 != 0) in.push_back(0.0f);
  torch::Tensor x =
      torch::from_blob(in.data(), {static_cast<int64_t>(in.size())}, torch::kFloat32).clone();
  const torch::Tensor expected = at::tanh(x);
  exact_tanh_inplace(x.data_ptr<float>(), x.numel());
  INFO(x.numel() << " values");
  CHECK(x.numel() > 15000000);
  CHECK(std::memcmp(x.data_ptr<float>(), expected.data_ptr<float>(),
                    sizeof(float) * static_cast<size_t>(x.numel())) == 0);
}

TEST_CASE("The direct dot equals torch::dot for every length up to 1100 and many scales",
          "[legacy][exact]") {
  at::set_num_threads(1);
  // LibTorch 1.13 as Debian builds it takes BLAS's sdot_ for a float dot: there it must be
  // taken; elsewhere it may decline (the brain then calls torch::dot), as the probe decides
  if (TORCH_VERSION_MAJOR == 1) REQUIRE(exact_dot_available());
  if (!exact_dot_available())
    FIELDBRAIN_SKIP("this LibTorch's float dot is not BLAS's sdot_: torch::dot is called");
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(55);
  int64_t compared = 0, differing = 0;
  for (int64_t n = 1; n <= 1100; ++n) {
    for (double scale : {1e-20, 1e-3, 1.0, 1e5}) {
      const torch::Tensor a = at::randn({n}, gen, torch::kFloat32) * scale;
      // the novelty's operands: unit vectors, mostly positive overlap
      const torch::Tensor b = at::randn({n}, gen, torch::kFloat32) * 0.5 + a / scale;
      const float expected = torch::dot(a, b).item<float>();
      const float ours = exact_dot(a.data_ptr<float>(), b.data_ptr<float>(), n);
      ++compared;
      if (std::memcmp(&expected, &ours, sizeof ours) != 0) ++differing;
    }
  }
  INFO(compared << " dot products compared");
  CHECK(differing == 0);
}
