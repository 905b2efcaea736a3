// Exact algebraic properties of hrr/algebra.h (docs/hrr.md, "Numbers to expect").
// Tolerances are float rounding bounds: an FFT of length D accumulates a relative error of
// about eps * log2(D) (eps = 6e-8 in float32, 1.1e-16 in float64), i.e. ~6e-7 at D = 512 in
// float32 -- the 1e-5 of docs/hrr.md leaves a 15x margin, and 1e-12 in float64 a ~1000x margin.
#include "hrr/algebra.h"

#include "test/support/catch.h"
#include <cmath>
#include <stdexcept>

#include "hrr/random_vectors.h"
#include "hrr/similarity.h"

using namespace fieldbrain::hrr;

namespace {

// O(D^2) circular convolution in float64: c[i] = sum_j a[j] b[(i - j) mod D].
torch::Tensor direct_convolution(const torch::Tensor& a, const torch::Tensor& b) {
  const int64_t d = a.size(-1);
  const torch::Tensor i = torch::arange(d).unsqueeze(1);
  const torch::Tensor j = torch::arange(d).unsqueeze(0);
  const torch::Tensor index = (i - j).remainder(d);                            // [D, D]
  const torch::Tensor b_matrix = b.to(torch::kFloat64).index({"...", index});  // [..., D, D]
  return torch::matmul(b_matrix, a.to(torch::kFloat64).unsqueeze(-1)).squeeze(-1);
}

double max_abs(const torch::Tensor& t) { return t.abs().max().item<double>(); }

}  // namespace

TEST_CASE("bind equals the direct O(D^2) circular convolution for odd and even D", "[hrr]") {
  torch::Generator gen = make_generator(11);
  for (int64_t d : {7, 8, 511, 512}) {
    SECTION("float32, D = " + std::to_string(d)) {
      const torch::Tensor a = random({3, d}, gen);
      const torch::Tensor b = random({3, d}, gen);
      const torch::Tensor c = bind(a, b);
      REQUIRE(c.sizes() == a.sizes());
      REQUIRE(c.scalar_type() == torch::kFloat32);
      const double scale = (a.norm(2, {-1}) * b.norm(2, {-1})).max().item<double>();
      CHECK(max_abs(c.to(torch::kFloat64) - direct_convolution(a, b)) <= 1e-5 * scale);
    }
    SECTION("float64, D = " + std::to_string(d)) {
      const torch::Tensor a = random({2, d}, gen, torch::kFloat64);
      const torch::Tensor b = random({2, d}, gen, torch::kFloat64);
      CHECK(max_abs(bind(a, b) - direct_convolution(a, b)) <= 1e-12);
    }
  }
}

TEST_CASE("binding is commutative, associative and distributes over addition", "[hrr]") {
  torch::Generator gen = make_generator(12);
  const torch::Tensor a = random({4, 512}, gen), b = random({4, 512}, gen),
                      c = random({4, 512}, gen);
  CHECK(max_abs(bind(a, b) - bind(b, a)) <= 1e-5);
  CHECK(max_abs(bind(bind(a, b), c) - bind(a, bind(b, c))) <= 1e-5);
  CHECK(max_abs(bind(a, b + c) - (bind(a, b) + bind(a, c))) <= 1e-5);
  CHECK(max_abs(bind(a, identity(512)) - a) <= 1e-6);
}

TEST_CASE("involution is exact, self-inverse and conjugates the spectrum", "[hrr]") {
  torch::Generator gen = make_generator(13);
  for (int64_t d : {1, 2, 511, 512}) {
    const torch::Tensor a = random({3, d}, gen, torch::kFloat64);
    CHECK(torch::equal(involution(involution(a)), a));
    const torch::Tensor lhs = torch::fft::rfft(involution(a));
    CHECK(max_abs(torch::view_as_real(lhs - torch::fft::rfft(a).conj())) <= 1e-12);
    CHECK(max_abs(unbind(a, a) - bind(a, involution(a))) <= 1e-12);
  }
}

TEST_CASE("make_unitary gives unit spectra, unit norm and exact unbinding", "[hrr]") {
  torch::Generator gen = make_generator(14);
  for (int64_t d : {511, 512}) {
    const torch::Tensor u = make_unitary(random({8, d}, gen));
    // |U_k| = 1 and ||u|| = 1 up to float32 rounding of one FFT pair (~6e-7 << 1e-6 * log D).
    CHECK(max_abs(torch::fft::rfft(u).abs() - 1.0) <= 1e-6);
    CHECK(max_abs(u.norm(2, {-1}) - 1.0) <= 1e-6);
    const torch::Tensor a = random({8, d}, gen);
    const torch::Tensor back = unbind(bind(a, u), u);
    CHECK((1.0 - cosine(a, back)).max().item<double>() <= 1e-6);
    // For a unitary vector the involution is the exact inverse.
    CHECK(max_abs(involution(u) - exact_inverse(u, 0.0)) <= 1e-5);
  }
  SECTION("zero and near-zero spectra produce no NaN") {
    const torch::Tensor zero = torch::zeros({2, 64});
    const torch::Tensor u = make_unitary(zero);
    CHECK(torch::isfinite(u).all().item<bool>());
    CHECK(max_abs(u - identity(64).expand({2, 64})) <= 1e-6);
    // A vector whose odd bins are exactly zero: a period-2 signal.
    const torch::Tensor periodic = torch::tensor({1.0f, -1.0f}).repeat({32});
    CHECK(torch::isfinite(make_unitary(periodic)).all().item<bool>());
    CHECK(torch::isfinite(exact_inverse(zero)).all().item<bool>());
    CHECK(max_abs(exact_inverse(zero)) == 0.0);
  }
  SECTION("positive unitary vectors have +1 DC and Nyquist bins") {
    const torch::Tensor p = make_unitary(random({2, 512}, gen), true);
    const torch::Tensor spec = torch::fft::rfft(p);
    CHECK(max_abs(torch::view_as_real(spec.select(-1, 0)) - torch::tensor({1.0f, 0.0f})) <= 1e-6);
    CHECK(max_abs(torch::view_as_real(spec.select(-1, 256)) - torch::tensor({1.0f, 0.0f})) <= 1e-6);
  }
}

TEST_CASE("exact inverse recovers a noiseless pair; regularisation bounds the error", "[hrr]") {
  // §3.9.13: eps = 1e-8 * mean|B|^2 changes each bin by a factor |B|^2 / (|B|^2 + eps); with
  // |B|^2 ~ Exp(1) the smallest of 257 bins is ~1/257 >> 1e-8, so 1 - cos is ~1e-12 in exact
  // arithmetic; float32 rounding of 1/B in the smallest bins dominates and stays << 1e-4.
  torch::Generator gen = make_generator(15);
  for (auto dtype : {torch::kFloat32, torch::kFloat64}) {
    const torch::Tensor a = random({64, 512}, gen, dtype);
    const torch::Tensor b = random({64, 512}, gen, dtype);
    const torch::Tensor back = bind(bind(a, b), exact_inverse(b));
    CHECK((1.0 - cosine(a, back)).max().item<double>() <= 1e-4);
  }
}

TEST_CASE("permutations preserve norms, invert exactly and commute with binding", "[hrr]") {
  torch::Generator gen = make_generator(16);
  const torch::Tensor a = random({5, 512}, gen), b = random({5, 512}, gen);
  CHECK(torch::allclose(permute(a, 7).norm(2, {-1}), a.norm(2, {-1})));
  CHECK(torch::equal(inverse_permute(permute(a, 7), 7), a));
  // §3.9.9: a cyclic shift commutes with binding (why sequences prefer a random permutation).
  CHECK(max_abs(permute(bind(a, b), 5) - bind(permute(a, 5), b)) <= 1e-5);
  const torch::Tensor perm = random_permutation(512, gen);
  CHECK(torch::equal(inverse_permute(permute(a, perm), perm), a));
  CHECK(torch::allclose(permute(a, perm).norm(2, {-1}), a.norm(2, {-1})));
  CHECK_THROWS_AS(permute(a, torch::zeros({512}, torch::kInt64)), std::invalid_argument);
}

TEST_CASE("fractional powers compose for positive unitary vectors", "[hrr]") {
  torch::Generator gen = make_generator(17);
  const torch::Tensor v = random({3, 511}, gen, torch::kFloat64);
  CHECK(max_abs(power(v, 2.0) - bind(v, v)) <= 1e-12);
  CHECK(max_abs(power(v, 0.0) - identity(511, torch::kFloat64)) <= 1e-12);
  const torch::Tensor u = make_unitary(random({3, 512}, gen, torch::kFloat64), true);
  CHECK(max_abs(bind(power(u, 0.5), power(u, 0.5)) - u) <= 1e-12);
  CHECK(max_abs(bind(power(u, 0.3), power(u, 1.2)) - power(u, 1.5)) <= 1e-12);
  CHECK(max_abs(power(u, -1.0) - involution(u)) <= 1e-12);
}

TEST_CASE("batched calls equal looped calls and broadcast leading dims", "[hrr]") {
  torch::Generator gen = make_generator(18);
  const torch::Tensor a = random({2, 3, 256}, gen);
  const torch::Tensor b = random({1, 3, 256}, gen);
  const torch::Tensor batched = bind(a, b);
  REQUIRE(batched.sizes() == torch::IntArrayRef({2, 3, 256}));
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      CHECK(max_abs(batched[i][j] - bind(a[i][j], b[0][j])) <= 1e-6);
    }
  }
  const torch::Tensor keys = random({10, 256}, gen);
  const torch::Tensor matrix = cosine_matrix(a, keys);
  REQUIRE(matrix.sizes() == torch::IntArrayRef({2, 3, 10}));
  CHECK(max_abs(matrix[1][2][4] - cosine(a[1][2], keys[4])) <= 1e-6);
  CHECK(max_abs(dot_matrix(a, keys)[0][1][3] - fieldbrain::hrr::dot(a[0][1], keys[3])) <= 1e-6);
}

TEST_CASE("bundle weights items and normalisation changes magnitude only", "[hrr]") {
  torch::Generator gen = make_generator(19);
  const torch::Tensor items = random({4, 3, 128}, gen);
  const torch::Tensor weights = torch::tensor({0.5f, 2.0f, -1.0f});
  const torch::Tensor expected =
      items.select(1, 0) * 0.5 + items.select(1, 1) * 2.0 - items.select(1, 2);
  CHECK(max_abs(bundle(items, weights) - expected) <= 1e-6);
  const torch::Tensor unit = bundle(items, weights, true);
  CHECK(max_abs(unit.norm(2, {-1}) - 1.0) <= 1e-6);
  CHECK(max_abs(cosine(unit, items.select(1, 1)) - cosine(expected, items.select(1, 1))) <= 1e-6);
  CHECK(max_abs(bundle(torch::TensorList({items.select(1, 0), items.select(1, 1)})) -
                (items.select(1, 0) + items.select(1, 1))) <= 1e-6);
}

TEST_CASE("bad inputs are refused with std::invalid_argument", "[hrr]") {
  torch::Generator gen = make_generator(20);
  const torch::Tensor a = random({512}, gen);
  CHECK_THROWS_AS(bind(a, random({511}, gen)), std::invalid_argument);
  CHECK_THROWS_AS(bind(a, random({512}, gen, torch::kFloat64)), std::invalid_argument);
  CHECK_THROWS_AS(bind(a.to(torch::kInt32), a.to(torch::kInt32)), std::invalid_argument);
  CHECK_THROWS_AS(bind(torch::Tensor(), a), std::invalid_argument);
  CHECK_THROWS_AS(bundle(a), std::invalid_argument);
  CHECK_THROWS_AS(exact_inverse(a, -1.0), std::invalid_argument);
  CHECK_THROWS_WITH(bind(a, random({511}, gen)), Catch::Contains("dimension mismatch"));
}
