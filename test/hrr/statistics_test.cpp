// Statistical correctness numbers of docs/hrr.md at D = 512.
// Each band is derived from the sampling error of the statistic (stated next to it), plus the
// known finite-D bias where there is one; nothing is tuned to the seed.
#include "test/support/catch.h"
#include <cmath>

#include "hrr/algebra.h"
#include "hrr/random_vectors.h"
#include "hrr/similarity.h"

using namespace fieldbrain::hrr;

namespace {

constexpr int64_t kStatsDim = 512;
constexpr int64_t kTrials = 200;

struct Sample {
  double mean, sd, min, max;
};

Sample describe(const torch::Tensor& values) {
  const torch::Tensor v = values.to(torch::kFloat64).flatten();
  return {v.mean().item<double>(), v.std().item<double>(), v.min().item<double>(),
          v.max().item<double>()};
}

// cos(filler_0, unbind(sum_i bind(role_i, filler_i), role_0)) over kTrials traces.
torch::Tensor retrieval_cosines(int64_t pairs, bool unitary_roles, bool exact, uint64_t seed) {
  torch::Generator gen = make_generator(seed);
  const torch::Tensor fillers = normalize(random({kTrials, pairs, kStatsDim}, gen));
  torch::Tensor roles = normalize(random({kTrials, pairs, kStatsDim}, gen));
  if (unitary_roles) roles = make_unitary(roles);
  const torch::Tensor trace = bind(roles, fillers).sum(-2);
  const torch::Tensor role = roles.select(1, 0);
  const torch::Tensor back = exact ? bind(trace, exact_inverse(role)) : unbind(trace, role);
  return cosine(back, fillers.select(1, 0));
}

}  // namespace

TEST_CASE("single pair recovery is ~0.71 for Gaussian roles and exact otherwise", "[hrr]") {
  SECTION("Gaussian role + involution") {
    const Sample s = describe(retrieval_cosines(1, false, false, 101));
    // cos -> 1/sqrt(E|B|^4) = 1/sqrt(2) as D -> inf (§3.2). The finite-D bias is O(1/sqrt(D))
    // small: 0.7105 - 0.7071 = 0.0034 at D = 512 from 4,000 trials (§3.2), so we allow 0.005.
    // The sampling error of the mean is sd / sqrt(200) ~ 0.002 (sd measured below); 4 of them.
    const double band = 0.005 + 4.0 * s.sd / std::sqrt(static_cast<double>(kTrials));
    CHECK(std::abs(s.mean - 1.0 / std::sqrt(2.0)) <= band);
    // Per-sample spread 0.0286 at D = 512 (§3.2); the sd of a 200-sample sd is sd/sqrt(400) =
    // 5 %, so +-30 % is a > 6 sigma band.
    CHECK(s.sd == Approx(0.0286).epsilon(0.30));
    // §3.9.4: every sample in (0.5, 0.9); min over 4,000 trials was 0.54, i.e. > 5 sd below.
    CHECK(s.min > 0.5);
    CHECK(s.max < 0.9);
  }
  SECTION("unitary role + involution, and Gaussian role + exact inverse") {
    CHECK(describe(retrieval_cosines(1, true, false, 102)).min >= 0.999);
    CHECK(describe(retrieval_cosines(1, false, true, 103)).min >= 0.999);
  }
}

TEST_CASE("superposed pairs follow 1/sqrt(k+1) (Gaussian) and 1/sqrt(k) (unitary)", "[hrr]") {
  // §3.9.5: mean over 200 trials within +-0.03 of theory. The per-trial sd at D = 512 is
  // < 0.05 for these k, so the mean's sampling error is < 0.0035: the band is ~8 sigma
  // and also absorbs the O(1/D) bias of the ratio estimator.
  for (int64_t k : {2, 5, 10}) {
    const double gaussian = describe(retrieval_cosines(k, false, false, 200 + k)).mean;
    const double unitary = describe(retrieval_cosines(k, true, false, 300 + k)).mean;
    INFO("k = " << k);
    CHECK(std::abs(gaussian - 1.0 / std::sqrt(k + 1.0)) <= 0.03);
    CHECK(std::abs(unitary - 1.0 / std::sqrt(static_cast<double>(k))) <= 0.03);
  }
}

TEST_CASE("the exact inverse amplifies noise in a superposition (k = 2)", "[hrr]") {
  // §3.3: with a second pair in the trace the exact inverse yields 0.36, the involution 0.58:
  // 1/|B_k| has unbounded variance. sd of the mean of 200 trials is < 0.02 for both.
  const double exact = describe(retrieval_cosines(2, false, true, 401)).mean;
  const double approximate = describe(retrieval_cosines(2, false, false, 401)).mean;
  CHECK(exact == Approx(0.36).margin(0.06));
  CHECK(approximate == Approx(0.578).margin(0.03));
  CHECK(exact < approximate - 0.1);
}

TEST_CASE("bundle similarity follows w_i / sqrt(sum w^2); non-members sit at the noise floor",
          "[hrr]") {
  torch::Generator gen = make_generator(501);
  const int64_t k = 10;
  const torch::Tensor items = normalize(random({kTrials, k, kStatsDim}, gen));
  SECTION("equal weights") {
    const torch::Tensor s = bundle(items);
    const Sample member = describe(cosine(s.unsqueeze(1), items));
    // cos(S, v_i) = (1 + sum_{j != i} v_j.v_i) / |S|: noise sd sqrt((k-1)/D)/sqrt(k) ~ 0.042
    // per sample; 200 independent bundles give a standard error 0.003; 5 of them = 0.015.
    CHECK(member.mean == Approx(1.0 / std::sqrt(static_cast<double>(k))).margin(0.015));
    const torch::Tensor outsider = normalize(random({kTrials, kStatsDim}, gen));
    const Sample other = describe(cosine(s, outsider));
    // Unrelated: mean 0 with sd 1/sqrt(D) = 0.044 per sample -> 5 standard errors = 0.016.
    CHECK(std::abs(other.mean) <= 5.0 * 0.0442 / std::sqrt(static_cast<double>(kTrials)));
  }
  SECTION("weighted, with and without normalisation") {
    std::vector<float> w(k, 1.0f);
    w[0] = 3.0f;
    const torch::Tensor weights = torch::tensor(w);
    const torch::Tensor s = bundle(items, weights);
    const double expected = 3.0 / std::sqrt(9.0 + (k - 1));
    // Same noise as above scaled by the weight ratio; 0.02 keeps > 5 standard errors.
    CHECK(describe(cosine(s, items.select(1, 0))).mean == Approx(expected).margin(0.02));
    const torch::Tensor unit = bundle(items, weights, true);
    CHECK((cosine(unit, items.select(1, 0)) - cosine(s, items.select(1, 0)))
              .abs()
              .max()
              .item<double>() <= 1e-6);
  }
}

TEST_CASE("random vectors are quasi-orthogonal: |cos| < 6/sqrt(D)", "[hrr]") {
  // §3.7: sd 1/sqrt(D); a 6-sigma excursion has probability ~2e-9 per pair, so the chance any
  // of these 2,000 pairs fails is ~4e-6.
  torch::Generator gen = make_generator(601);
  const torch::Tensor a = random({2000, kStatsDim}, gen);
  const torch::Tensor b = random({2000, kStatsDim}, gen);
  const Sample s = describe(cosine(a, b));
  CHECK(std::max(std::abs(s.min), std::abs(s.max)) < 6.0 / std::sqrt(static_cast<double>(kStatsDim)));
  CHECK(s.sd == Approx(1.0 / std::sqrt(static_cast<double>(kStatsDim))).epsilon(0.1));
  // N(0, 1/D) entries: E||v||^2 = 1 with sd sqrt(2/D) = 0.0625 per vector.
  CHECK(a.square().sum(-1).mean().item<double>() == Approx(1.0).margin(0.01));
}

TEST_CASE("1,000 unitary bind/unbind round trips drift < 1e-3 in float32", "[hrr]") {
  // Each cycle adds a float32 rounding error of ~eps * log2(D) ~ 6e-7 in a random direction;
  // after 1,000 cycles the accumulated error is <= 1000 * 6e-7 = 6e-4 even if it added up
  // coherently, so 1 - cos <= (6e-4)^2 / 2 ~ 2e-7: drift < 1e-3 (docs/hrr.md) and cos >= 0.9999
  // (§3.9.7) both hold with a wide margin.
  torch::Generator gen = make_generator(701);
  const torch::Tensor start = normalize(random({16, kStatsDim}, gen));
  torch::Tensor x = start;
  for (int cycle = 0; cycle < 1000; ++cycle) {
    const torch::Tensor role = random_unitary({16, kStatsDim}, gen);
    x = normalize(unbind(bind(x, role), role));
  }
  const double worst = cosine(x, start).min().item<double>();
  CHECK(1.0 - worst < 1e-3);
  CHECK(worst >= 0.9999);
}

TEST_CASE("Gaussian roles collapse under repeated round trips (documented, §3.6)", "[hrr]") {
  // Every Gaussian cycle multiplies the spectrum by |R_k|^2 ~ Exp(1): after 100 cycles the
  // energy sits in a few bins and cos with the start is ~0.07 (§3.6). Mean over 16 chains.
  torch::Generator gen = make_generator(702);
  const torch::Tensor start = normalize(random({16, kStatsDim}, gen, torch::kFloat64));
  torch::Tensor x = start;
  for (int cycle = 0; cycle < 100; ++cycle) {
    const torch::Tensor role = random({16, kStatsDim}, gen, torch::kFloat64);
    x = normalize(unbind(bind(x, role), role));
  }
  CHECK(cosine(x, start).mean().item<double>() < 0.2);
}
