// The fused operator against the C++ reference path (fieldbrain::field_step_reference), one
// step on fresh inputs (<= 1e-6 max abs difference) and many steps fed back into themselves
// (<= 1e-4): the tolerances below, with what they were set from.
#include "test/support/catch.h"

#include <cstdio>

#include "brain/field_dynamics.h"
#include "brain/ops/field_step.h"
#include "brain/ops/field_step_inputs.h"

namespace {

using fieldbrain::ops::make_field_step_inputs;

// Set from what was measured (Debian 12, LibTorch 1.13; printed by every run):
// - one step on fresh inputs: at most 4.8e-7 (two ulps of values near 2) in all 29 cases, with
//   each variant (FIELDBRAIN_ISA = avx512, avx2, default). About twice that:
constexpr double kStepTolerance = 1e-6;
// - steps fed back into themselves: 6.0e-7 over 200 steps at R = 16, but 6.1e-5 after 10 steps
//   at R = 32, B = 4 and 6.6e-5 at most over 200 (the [slow] case): where the step is steep in
//   an element an ulp grows (against the Python reference one element of channel 56 is 1.3e-5
//   off after a single R = 32 step, scripts/ops/field_step_parity.py), and the following
//   steps carry it on. Above that worst:
constexpr double kTolerance = 1e-4;

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// One step's difference, printed (the numbers the tolerance was set from) and returned.
double step_diff(const char* what, int64_t R, int64_t B, int has_ef, const torch::Tensor& op,
                 const torch::Tensor& ref) {
  const double d = max_abs_diff(op, ref);
  std::printf("one fused step vs reference [%s] isa=%s R=%lld B=%lld has_ef=%d: max|diff| %.3g\n",
              what, fieldbrain::ops::field_step_cpu_isa().c_str(), static_cast<long long>(R),
              static_cast<long long>(B), has_ef, d);
  return d;
}

// max|F[b, 0:48]| per robot.
torch::Tensor content_max(const torch::Tensor& f) {
  return f.slice(1, 0, 48).abs().flatten(1).amax(1);
}

}  // namespace

TEST_CASE("one fused field step matches the reference step", "[parity][ops]") {
  const int64_t R = GENERATE(16, 32);
  const int64_t B = GENERATE(1, 4);
  const int has_ef = GENERATE(0, -1);  // none, or alternating 1, 0, ... per robot
  CAPTURE(R, B, has_ef);

  SECTION("construction-like field: no squash") {
    // Content scaled so that max|Fn[0:48]| lies in (1, 2): an output above 1 proves the
    // squash (tanh) was not applied, and both paths must agree on that.
    auto in = make_field_step_inputs(B, R, 1000 + R + B, 1.6, has_ef);
    const auto ref = fieldbrain::field_step_reference(in.field, in.noise, in.wave, in.ef, in.scalars);
    const auto op = fieldbrain::ops::field_step(in.field, in.noise, in.wave, in.ef, in.scalars);
    CHECK((content_max(ref) > 1.0).all().item<bool>());
    CHECK(step_diff("no squash", R, B, has_ef, op, ref) <= kStepTolerance);
  }
  SECTION("strong content: the squash triggers") {
    auto in = make_field_step_inputs(B, R, 2000 + R + B, 4.0, has_ef);
    const auto ref = fieldbrain::field_step_reference(in.field, in.noise, in.wave, in.ef, in.scalars);
    const auto op = fieldbrain::ops::field_step(in.field, in.noise, in.wave, in.ef, in.scalars);
    CHECK((content_max(ref) <= 1.0).all().item<bool>());
    CHECK(step_diff("squash", R, B, has_ef, op, ref) <= kStepTolerance);
  }
  SECTION("a batch mixing squashed and unsquashed robots") {
    auto in = make_field_step_inputs(B, R, 3000 + R + B, 1.0, has_ef);
    for (int64_t b = 0; b < B; b += 2) in.field[b].slice(0, 0, 48).mul_(4.0);
    const auto ref = fieldbrain::field_step_reference(in.field, in.noise, in.wave, in.ef, in.scalars);
    const auto op = fieldbrain::ops::field_step(in.field, in.noise, in.wave, in.ef, in.scalars);
    CHECK(step_diff("mixed", R, B, has_ef, op, ref) <= kStepTolerance);
  }
}

TEST_CASE("odd resolutions and NaN repair match the reference", "[parity][ops]") {
  const int64_t R = GENERATE(1, 2, 3, 8, 13);
  CAPTURE(R);
  auto in = make_field_step_inputs(2, R, 77 + R, 1.0, -1);
  in.field[0][5][0][0][0] = std::nanf("");
  in.field[1][50][R - 1][0][R - 1] = std::nanf("");
  const auto ref = fieldbrain::field_step_reference(in.field, in.noise, in.wave, in.ef, in.scalars);
  const auto op = fieldbrain::ops::field_step(in.field, in.noise, in.wave, in.ef, in.scalars);
  REQUIRE(torch::isfinite(ref).all().item<bool>());
  CHECK(torch::isfinite(op).all().item<bool>());
  CHECK(step_diff("odd R, NaN repair", R, 2, -1, op, ref) <= kStepTolerance);
}

// The field fed back into itself, new noise and slowly drifting scalars every step, as in the
// brain; every step must stay within the tolerance.
static void iterate_and_compare(int64_t B, int64_t R, int steps, uint64_t seed) {
  auto in = make_field_step_inputs(B, R, seed, 1.0, -1);
  torch::Tensor ref = in.field.clone(), fast = in.field.clone(), out = torch::empty_like(in.field);
  at::Generator gen = at::detail::createCPUGenerator(seed + 1);
  double worst = 0.0;
  int squashed_steps = 0;
  for (int step = 0; step < steps; ++step) {
    const auto noise = torch::randn({B, 48, R, R, R}, gen);
    auto scalars = in.scalars.clone();
    scalars.select(1, 1).copy_(0.5 + 0.5 * torch::sin(torch::full({B}, 0.05 * step)));
    if (step % 50 == 5) {  // push the content to max 3 so that the squash triggers
      const double k = 3.0 / ref.slice(1, 0, 48).abs().max().item<double>();
      ref.slice(1, 0, 48).mul_(k);
      fast.slice(1, 0, 48).mul_(k);
    }
    squashed_steps += (content_max(ref) > 2.0).any().item<bool>();
    ref = fieldbrain::field_step_reference(ref, noise, in.wave, in.ef, scalars);
    fieldbrain::ops::field_step_out(fast, noise, in.wave, in.ef, scalars, out);
    std::swap(fast, out);
    const double diff = max_abs_diff(fast, ref);
    worst = std::max(worst, diff);
    INFO("step " << step);
    REQUIRE(diff <= kTolerance);
  }
  CHECK(squashed_steps > 0);
  WARN("B=" << B << " R=" << R << " steps=" << steps << " worst max|diff| = " << worst);
}

TEST_CASE("200 fused steps track the reference at R=16, B=1", "[parity][ops]") {
  iterate_and_compare(1, 16, 200, 11);
}
TEST_CASE("200 fused steps track the reference at R=16, B=4", "[parity][ops]") {
  iterate_and_compare(4, 16, 200, 12);
}
TEST_CASE("40 fused steps track the reference at R=32, B=1", "[parity][ops]") {
  iterate_and_compare(1, 32, 40, 13);
}
TEST_CASE("10 fused steps track the reference at R=32, B=4", "[parity][ops]") {
  iterate_and_compare(4, 32, 10, 14);
}

// The full 200 steps at R = 32 take ~10 minutes (the reference step costs seconds at B = 4):
// hidden from the default run, run with `fieldbrain-tests-ops "[slow]"`.
TEST_CASE("200 fused steps track the reference at R=32, B=1 and B=4", "[.][slow][parity][ops]") {
  iterate_and_compare(1, 32, 200, 15);
  iterate_and_compare(4, 32, 200, 16);
}
