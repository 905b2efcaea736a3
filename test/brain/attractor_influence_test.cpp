// The reference cycle's attractor pull on the CPU (step 7.9, brain/attractor_influence.h: the walk
// RewardAttractorsImpl::influence runs) against the ATen expression it replaced, kept here as
// the independent reference: the same floats, bit for bit, over random fields and banks.
//
// On Debian 13 (LibTorch 2.6) the expression's cosine_similarity is computed differently from
// 1.13's (the norms clamped at eps instead of the squared norms at eps^2, and summed in another
// order), but in float64: every product and quotient of the cosine is the same one rounding on
// both, only the sums' orders differ (~1e-16 relative), so the cosine rounded to float is the
// same (brain/portable_math.h's argument), and the rest of the expression is float arithmetic
// that every release rounds alike.
#include "test/support/catch.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "brain/attractor_influence.h"
#include "brain/reward_attractors.h"
#include "test/support/test_seed.h"

namespace fieldbrain::test {
namespace {

constexpr int64_t kSlots = 8, kChannels = 64;

// The same bits, NaN and signed zeros included.
bool same_bits(const torch::Tensor& a, const torch::Tensor& b) {
  return torch::equal(a.contiguous().view(torch::kInt), b.contiguous().view(torch::kInt));
}

std::string describe_difference(const torch::Tensor& walk, const torch::Tensor& aten) {
  const auto differ = walk.view(torch::kInt) != aten.view(torch::kInt);
  std::ostringstream out;
  out << differ.sum().item<int64_t>() << " of " << walk.numel() << " floats differ, max |diff| "
      << (walk.to(torch::kDouble) - aten.to(torch::kDouble)).abs().max().item<double>();
  return out.str();
}

// One robot's field: what the brain holds (unit-ish values), the extremes, or nothing.
enum class FieldKind { kNormal, kZero, kLarge, kTiny, kDenormal, kMixed };
const char* name_of(FieldKind k) {
  switch (k) {
    case FieldKind::kNormal: return "normal";
    case FieldKind::kZero: return "zero";
    case FieldKind::kLarge: return "large (1e30)";
    case FieldKind::kTiny: return "tiny (1e-12: eps clamps the norm)";
    case FieldKind::kDenormal: return "denormal floats (1e-41)";
    case FieldKind::kMixed: return "channels of mixed scale";
  }
  return "?";
}

torch::Tensor make_field(FieldKind kind, int64_t R) {
  const auto x = torch::randn({kChannels, R, R, R});
  switch (kind) {
    case FieldKind::kNormal: return x;
    case FieldKind::kZero: return torch::zeros_like(x);
    case FieldKind::kLarge: return x * 1e30;
    case FieldKind::kTiny: return x * 1e-12;
    case FieldKind::kDenormal: return x * 1e-41;
    case FieldKind::kMixed:
      return x * torch::pow(10.0, torch::randint(-6, 7, {kChannels, 1, 1, 1}).to(torch::kFloat));
  }
  return x;
}

// A slot's stored field, relative to the robot's field F: near it (the usual case: a recent
// field), near -F, unrelated, an exact copy, zero, or at another scale.
torch::Tensor make_slot(const torch::Tensor& F, std::mt19937_64& rng) {
  const auto noise = torch::randn_like(F);
  const double scale = F.abs().max().item<double>() > 0 ? F.abs().max().item<double>() : 1.0;
  switch (std::uniform_int_distribution<int>(0, 7)(rng)) {
    case 0: return F + 0.01 * scale * noise;
    case 1: return F + 0.3 * scale * noise;
    case 2: return -F + 0.1 * scale * noise;
    case 3: return noise * scale;
    case 4: return F.clone();
    case 5: return torch::zeros_like(F);
    case 6: return noise * 1e-12;
    default: return F * 0.5 + noise * 1e3;
  }
}

struct Case {
  int64_t R, B;
  FieldKind kind;
};

// Random banks for every robot of `m` (capacity 8): `live` valid slots at random places, each
// of either valence, strengths from a fresh reward to one about to fade (strength * 0.95^(age+1)
// on either side of the retirement threshold 0.001); the invalid slots hold garbage.
void fill_bank(RewardAttractorsImpl& m, const torch::Tensor& field, std::mt19937_64& rng,
               std::ostringstream& what) {
  auto st = m.strength.accessor<double, 2>();
  auto va = m.valence.accessor<double, 2>();
  auto ag = m.age.accessor<int64_t, 2>();
  auto ok = m.valid.accessor<int64_t, 2>();
  for (int64_t b = 0; b < m.options.batch(); ++b) {
    const int64_t live = std::uniform_int_distribution<int64_t>(1, kSlots)(rng);
    std::vector<int64_t> order(kSlots);
    for (int64_t j = 0; j < kSlots; ++j) order[j] = j;
    std::shuffle(order.begin(), order.end(), rng);
    what << " robot " << b << ": " << live << " live";
    for (int64_t k = 0; k < kSlots; ++k) {
      const int64_t j = order[k];
      const bool valid = k < live;
      m.bank[b][j].copy_(valid ? make_slot(field[b], rng) : torch::randn_like(field[b]) * 7.0);
      ok[b][j] = valid ? 1 : 0;
      va[b][j] = std::bernoulli_distribution(0.5)(rng) ? 1.0 : -1.0;
      const int64_t age = std::uniform_int_distribution<int64_t>(0, 130)(rng);
      ag[b][j] = age;
      if (std::bernoulli_distribution(0.25)(rng)) {  // at the retirement threshold
        const double edge = 0.001 / std::pow(0.95, static_cast<double>(age + 1));
        st[b][j] = edge * (std::bernoulli_distribution(0.5)(rng) ? 1.0 + 1e-9 : 1.0 - 1e-9);
      } else {
        st[b][j] = std::uniform_real_distribution<double>(0.1, 1.0)(rng);
      }
    }
  }
}

RewardAttractors twin_of(const RewardAttractors& m) {
  RewardAttractors twin(
      RewardAttractorsOptions(m->options.batch(), kSlots, m->options.resolution()));
  twin->bank.copy_(m->bank);
  twin->strength.copy_(m->strength);
  twin->valence.copy_(m->valence);
  twin->age.copy_(m->age);
  twin->valid.copy_(m->valid);
  return twin;
}

// One case: the module's influence (the walk) against influence_aten (the ATen expression it replaced) on a twin, bit for bit;
// the slots' ageing must agree too. Returns whether the field moved at all.
bool check_case(const Case& c, std::mt19937_64& rng) {
  std::vector<torch::Tensor> robots;
  for (int64_t b = 0; b < c.B; ++b) robots.push_back(make_field(c.kind, c.R));
  const auto field = torch::stack(robots);
  RewardAttractors walk(RewardAttractorsOptions(c.B, kSlots, c.R));
  std::ostringstream what;
  what << "R=" << c.R << " B=" << c.B << ", field " << name_of(c.kind) << ",";
  fill_bank(*walk, field, rng, what);
  auto aten = twin_of(walk);
  auto by_walk = field.clone(), by_aten = field.clone();
  walk->influence(by_walk);
  aten->influence_aten(by_aten);
  INFO(what.str());
  INFO((same_bits(by_walk, by_aten) ? std::string("same bits")
                                     : describe_difference(by_walk, by_aten)));
  REQUIRE(same_bits(by_walk, by_aten));
  REQUIRE(torch::equal(walk->age, aten->age));
  REQUIRE(torch::equal(walk->valid, aten->valid));
  return !same_bits(by_walk, field);
}

}  // namespace

TEST_CASE("On the CPU the reference attractor pull gives the ATen expression's floats bit for bit",
          "[brain][attractors][exact]") {
  const uint64_t seed = test_seed("attractor pull vs ATen");
  torch::manual_seed(seed);
  std::mt19937_64 rng(seed);
  const FieldKind kinds[] = {FieldKind::kNormal, FieldKind::kZero, FieldKind::kLarge,
                             FieldKind::kTiny, FieldKind::kDenormal, FieldKind::kMixed};
  int moved = 0, cases = 0;
  for (const int64_t R : {8, 16}) {
    for (const int64_t B : {1, 3}) {
      for (const FieldKind kind : kinds) {
        // Unit-scale fields are the brain's: more draws of them, and fewer at R = 16.
        const int draws = (kind == FieldKind::kNormal ? 6 : 2) * (R == 8 ? 2 : 1);
        for (int i = 0; i < draws; ++i) {
          moved += check_case({R, B, kind}, rng) ? 1 : 0;
          ++cases;
        }
      }
    }
  }
  // Not a comparison of two no-ops: nearly every case moves the field (a zero field with zero
  // slots, or denormals whose pull rounds to nothing, may not).
  CHECK(moved > cases * 3 / 4);
}

TEST_CASE("The reference attractor pull gives the same bits on one thread and on several",
          "[brain][attractors][exact]") {
  const uint64_t seed = test_seed("attractor pull threads");
  torch::manual_seed(seed);
  std::mt19937_64 rng(seed);
  const int threads_before = at::get_num_threads();
  for (const int64_t R : {8, 16}) {
    const auto F = torch::randn({kChannels, R, R, R});
    std::vector<torch::Tensor> slots;
    std::vector<AttractorPull> pulls;
    for (int64_t j = 0; j < kSlots; ++j) {
      slots.push_back(make_slot(F, rng).contiguous());
      pulls.push_back(
          {slots.back().data_ptr<float>(), 0.3 * 0.95 * 0.01 * (j % 2 ? 1 : -1), j % 2 == 1});
    }
    torch::Tensor results[2];
    for (int t = 0; t < 2; ++t) {
      at::set_num_threads(t == 0 ? 1 : 4);
      results[t] = F.clone();
      attractor_influence(results[t].data_ptr<float>(), kChannels, R * R * R, pulls);
    }
    CAPTURE(R);
    CHECK(same_bits(results[0], results[1]));
    CHECK_FALSE(same_bits(results[0], F));
  }
  at::set_num_threads(threads_before);
}

}  // namespace fieldbrain::test
