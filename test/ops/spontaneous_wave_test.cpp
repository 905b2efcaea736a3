// The fused spontaneous wave (fieldbrain::spontaneous_wave_out, docs/cycle.md step 7.2) against
// FieldDynamics' ATen expression over many cycles' phases, its zero-allocation steady state
// (with the fused field step writing into the module's `next`), its argument checks, and CUDA
// against CPU.
#include "test/support/catch.h"

#include <cmath>

#include "brain/field_dynamics.h"
#include "brain/field_dynamics_fused.h"
#include "brain/ops/allocation_counter.h"
#include "brain/ops/field_step_inputs.h"
#include "brain/ops/spontaneous_wave.h"
#include "test/support/devices.h"

namespace {

using fieldbrain::FieldDynamics;
using fieldbrain::FieldDynamicsOptions;
using fieldbrain::FusedFieldDynamics;

// Two modules of B robots with the same wave vectors: one on the ATen path, one fused.
std::pair<FieldDynamics, FusedFieldDynamics> twin_dynamics(int64_t B, int64_t R, uint64_t seed) {
  FieldDynamics aten(FieldDynamicsOptions(B, R));
  FusedFieldDynamics fused(FieldDynamicsOptions(B, R));
  for (int64_t b = 0; b < B; ++b) {
    aten->init_robot(b, seed + 17 * b);
    fused->init_robot(b, seed + 17 * b);
  }
  return {aten, fused};
}

// The phases 0.1 n of B robots at cycle n0 + b * spread, as a column of a wider table (the
// layout of CycleContext::phase, a strided view).
torch::Tensor phase_column(int64_t B, int64_t n0, int64_t spread) {
  auto table = torch::zeros({B, 7});
  for (int64_t b = 0; b < B; ++b) table[b][3] = static_cast<float>(0.1 * static_cast<double>(n0 + b * spread));
  return table.select(1, 3);
}

}  // namespace

TEST_CASE("The fused spontaneous wave follows the module's ATen wave over many cycles",
          "[brain][fused][ops]") {
  const int64_t B = GENERATE(2, 3);
  const int64_t R = GENERATE(8, 13, 16);
  CAPTURE(B, R);
  auto [aten, fused] = twin_dynamics(B, R, 1000 + 10 * B + R);
  // Robots have 3, 4 or 5 wave vectors: give robot 0 three (as construction leaves a robot
  // with n_waves = 3: the last rows zero, their mask 0) so masked rows are always exercised.
  using State = fieldbrain::FieldDynamicsState;
  for (State* d : {static_cast<State*>(aten.get()), static_cast<State*>(fused.get())}) {
    d->wave_vectors[0].slice(0, 3).zero_();
    d->wave_mask[0].slice(0, 3).zero_();
  }
  double worst = 0.0;
  for (const int64_t n0 : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{57}, int64_t{999},
                           int64_t{12345}, int64_t{200000}}) {
    const auto phi = phase_column(B, n0, 31);
    REQUIRE_FALSE(phi.is_contiguous());
    const auto expected = aten->compute_wave(phi).clone();
    const auto& got = fused->compute_wave(phi);
    REQUIRE(got.data_ptr() == fused->wave.data_ptr());  // written in place
    const double diff = (got - expected).abs().max().item<double>();
    CAPTURE(n0, diff);
    // Both evaluate sin of the same float phase; the ATen side rounds its float argument
    // (|phase + dot/3| up to ~2e4 here, ulp ~2e-3 at 200000 * 0.1 = 2e4), the fused side
    // splits it exactly: allow that argument rounding, times up to 5 waves.
    const double arg = std::abs(0.1 * static_cast<double>(n0 + (B - 1) * 31)) + 2.0 * R;
    const double tolerance = 1e-5 + 5.0 * arg * 1.2e-7;
    CHECK(diff <= tolerance);
    worst = std::max(worst, diff);
    // The wave is not trivially zero, and it is bounded by the number of wave vectors.
    CHECK(got.abs().max().item<float>() > 0.5f);
    CHECK(got.abs().max().item<float>() <= 5.0f + 1e-4f);
  }
  // At small phases the two agree to float rounding.
  const auto phi = phase_column(B, 3, 1);
  const auto expected = aten->compute_wave(phi).clone();
  CHECK((fused->compute_wave(phi) - expected).abs().max().item<double>() <= 1e-5);
}

TEST_CASE("The fused wave and the seeded field step create no tensor in steady state",
          "[brain][fused][ops]") {
  const int64_t B = 2, R = 16;
  auto [aten, fused] = twin_dynamics(B, R, 77);
  auto in = fieldbrain::ops::make_field_step_inputs(B, R, 9, 1.0, -1);
  auto key = torch::zeros({B, 2}, torch::kLong);
  key.select(1, 0).fill_(4242);
  const auto phi = phase_column(B, 10, 3);
  // warm-up: the per-thread scratch of the field step grows on first use
  fused->compute_wave(phi);
  fused->step_seeded(in.field, key, fused->wave, in.ef, in.scalars);
  const void* next_before = fused->next.data_ptr();

  fieldbrain::ops::AllocationCounter counter;
  {  // positive control: the counter sees an allocation, and the ATen wave does allocate
    aten->compute_wave(phi);
    REQUIRE(counter.count() > 0);
  }
  counter.reset();
  for (int i = 0; i < 3; ++i) {
    const auto& wave = fused->compute_wave(phi);
    const auto& next = fused->step_seeded(in.field, key, wave, in.ef, in.scalars);
    CHECK(next.data_ptr() == next_before);
  }
  CHECK(counter.count() == 0);
}

TEST_CASE("The fused wave refuses wrong arguments with a message naming them", "[ops][fused]") {
  using Catch::Contains;
  const int64_t B = 2, R = 8;
  auto wv = torch::zeros({B, 5, 3}), mask = torch::ones({B, 5}), phase = torch::zeros({B});
  auto wave = torch::zeros({B, R, R, R});
  CHECK_THROWS_WITH(fieldbrain::ops::spontaneous_wave_out(torch::zeros({B, 4, 3}), mask, phase, wave),
                    Contains("wave_vectors must have shape [B,5,3]"));
  CHECK_THROWS_WITH(fieldbrain::ops::spontaneous_wave_out(wv, torch::ones({B + 1, 5}), phase, wave),
                    Contains("wave_mask must have shape"));
  CHECK_THROWS_WITH(fieldbrain::ops::spontaneous_wave_out(wv, mask, torch::zeros({B}, torch::kDouble), wave),
                    Contains("phase must be float32"));
  auto strided = torch::zeros({B, R, R, 2 * R}).slice(3, 0, R);
  CHECK_THROWS_WITH(fieldbrain::ops::spontaneous_wave_out(wv, mask, phase, strided),
                    Contains("wave must be contiguous"));
  auto flat = torch::zeros({B, R, R});
  CHECK_THROWS_WITH(fieldbrain::ops::spontaneous_wave_out(wv, mask, phase, flat),
                    Contains("wave must have shape [B,R,R,R]"));
}

TEST_CASE("The fused wave gives the same values on every device", "[cuda][ops][fused]") {
  if (!fieldbrain::test::cuda_or_skip("spontaneous_wave_out CUDA vs CPU")) return;
  const std::string device_name = GENERATE(from_range(fieldbrain::test::test_devices()));
  const int64_t R = GENERATE(8, 13, 32);
  const int64_t B = GENERATE(1, 4);
  CAPTURE(device_name, R, B);
  const torch::Device device(device_name);
  auto [aten, fused] = twin_dynamics(B, R, 500 + R);
  const auto phi = phase_column(B, 123, 7);
  const auto expected = fused->compute_wave(phi).clone();
  auto wave = torch::empty({B, R, R, R}, torch::TensorOptions(device));
  const void* before = wave.data_ptr();
  fieldbrain::ops::spontaneous_wave_out(fused->wave_vectors.to(device), fused->wave_mask.to(device),
                                        phase_column(B, 123, 7).to(device), wave);
  CHECK(wave.data_ptr() == before);
  CHECK((wave.cpu() - expected).abs().max().item<double>() <= 2e-5);
}
