// The fused read-out (brain/ops/field_readout.h) against an independent ATen computation, in
// double, of every entry of its layout; its argument checks; and its allocation behaviour.
#include "brain/ops/field_readout.h"

#include "test/support/catch.h"
#include <string>
#include <vector>

#include "brain/ops/allocation_counter.h"
#include "brain/ops/field_step_inputs.h"

namespace {

using namespace fieldbrain::ops;
using Catch::Contains;

// One named block of the layout: [offset, offset + numel) of every row.
struct Block {
  std::string name;
  int64_t offset;
  torch::Tensor expected;  // [B, numel] double
};

// What each block must hold, from plain ATen ops on the field in double precision.
std::vector<Block> expected_blocks(const torch::Tensor& field_f) {
  const auto F = field_f.to(torch::kDouble);
  const int64_t B = F.size(0), R = F.size(2);
  const auto absF = F.abs();
  const auto X = F.slice(1, 0, 32);
  auto face = [&](int64_t dim, int64_t at) { return F.select(dim, at).mean({2, 3}); };  // [B,64]
  auto gradient = [&](int64_t dim) {
    return X.select(dim, R - 1).mean({1, 2, 3}) - X.select(dim, 0).mean({1, 2, 3});
  };
  const auto cell_abs = torch::adaptive_avg_pool3d(absF, {4, 4, 4}).reshape({B, 64, 64});
  return {
      {"cell means", kReadoutCellMean, torch::adaptive_avg_pool3d(F, {4, 4, 4}).reshape({B, -1})},
      {"cell |.| means", kReadoutCellAbsMean, cell_abs.reshape({B, -1})},
      {"channel means", kReadoutChannelMean, F.mean({2, 3, 4})},
      {"channel |.| means", kReadoutChannelAbsMean, absF.mean({2, 3, 4})},
      {"channel square means", kReadoutChannelSqMean, (F * F).mean({2, 3, 4})},
      {"channel max |.|", kReadoutChannelMaxAbs, absF.amax({2, 3, 4})},
      {"face means", kReadoutFaceMean,
       torch::stack(
           {face(2, 0), face(2, R - 1), face(3, 0), face(3, R - 1), face(4, 0), face(4, R - 1)}, 2)
           .reshape({B, -1})},
      {"cell activity", kReadoutCellActivity, cell_abs.mean(1)},
      {"summary", kReadoutSummary,
       torch::stack(
           {absF.mean({1, 2, 3, 4}), absF.amax({1, 2, 3, 4}),
            absF.slice(1, 0, 32).mean({1, 2, 3, 4}), absF.slice(1, 0, 48).mean({1, 2, 3, 4}),
            F.slice(1, 0, 48).reshape({B, -1}).var(1, /*unbiased=*/true), gradient(2), gradient(3),
            gradient(4)},
           1)},
  };
}

// A field like the brain's (construction draws), with a per-channel offset so that no mean is
// zero by symmetry and the variance's cancellation is exercised.
torch::Tensor make_field(int64_t B, int64_t R, uint64_t seed) {
  auto field = make_field_step_inputs(B, R, seed).field;
  field.add_(torch::linspace(-0.5, 0.5, 64).view({1, 64, 1, 1, 1}));
  return field;
}

void check_against_aten(const torch::Tensor& field, const torch::Tensor& got) {
  const int64_t B = field.size(0);
  REQUIRE(got.sizes() == torch::IntArrayRef({B, kReadoutWidth}));
  REQUIRE(got.scalar_type() == torch::kFloat);
  int64_t covered = 0;
  for (const auto& block : expected_blocks(field)) {
    const int64_t n = block.expected.size(1);
    const auto part = got.slice(1, block.offset, block.offset + n).to(torch::kDouble);
    const double err = (part - block.expected).abs().max().item<double>();
    const double scale = block.expected.abs().max().item<double>();
    INFO(block.name << ": max |error| " << err << " (largest entry " << scale << ")");
    CHECK(err <= 1e-6 * std::max(1.0, scale));
    covered += n;
  }
  CHECK(covered == kReadoutWidth);  // every entry of the layout is checked
}

}  // namespace

TEST_CASE("field_readout matches an ATen computation of every entry of its layout",
          "[ops][readout]") {
  const int64_t R =
      GENERATE(8, 10, 16, 32);  // 10: overlapping cells, as adaptive_avg_pool3d has them
  const int64_t B = GENERATE(1, 4);
  CAPTURE(R, B);
  const auto field = make_field(B, R, 40 + R + B);
  check_against_aten(field, field_readout(field));
}

TEST_CASE("field_readout sees a squashed field's large values and its faces' gradient",
          "[ops][readout]") {
  // A field with a known gradient along x on channels 0..31 and one large voxel.
  const int64_t R = 16;
  auto field = torch::zeros({2, 64, R, R, R});
  const auto ramp = torch::arange(R, torch::kFloat).view({1, 1, R, 1, 1}) / (R - 1);
  field.slice(1, 0, 32).add_(ramp);
  field[1][40][3][4][5] = -7.5f;
  const auto out = field_readout(field);
  const auto summary = out.slice(1, kReadoutSummary, kReadoutSummary + kSummaryCount);
  CHECK(summary[0][kSummaryGradientX].item<float>() == Approx(1.0).margin(1e-6));
  CHECK(summary[0][kSummaryGradientY].item<float>() == Approx(0.0).margin(1e-6));
  CHECK(summary[1][kSummaryMaxAbs].item<float>() == 7.5f);
  CHECK(out[1][kReadoutChannelMaxAbs + 40].item<float>() == 7.5f);
  CHECK(summary[0][kSummaryMaxAbs].item<float>() == 1.0f);
  check_against_aten(field, out);
}

TEST_CASE("field_readout reads a non-contiguous field like its contiguous copy", "[ops][readout]") {
  const auto big = make_field(2, 9, 3);  // [2,64,9,9,9] -> an R = 8 view
  const auto view = big.slice(2, 0, 8).slice(3, 1, 9).slice(4, 0, 8);
  REQUIRE_FALSE(view.is_contiguous());
  CHECK(torch::equal(field_readout(view), field_readout(view.contiguous())));
}

TEST_CASE("field_readout refuses malformed arguments with a clear message", "[ops][readout]") {
  const auto field = make_field(2, 8, 4);
  auto out = torch::empty({2, kReadoutWidth});
  SECTION("wrong rank") {
    CHECK_THROWS_WITH(field_readout(field[0]), Contains("field must have shape [B,64,R,R,R]"));
  }
  SECTION("wrong channel count") {
    CHECK_THROWS_WITH(field_readout(field.slice(1, 0, 63)),
                      Contains("field must have shape [B,64,R,R,R]"));
  }
  SECTION("not a cube") {
    CHECK_THROWS_WITH(field_readout(field.slice(4, 0, 7)),
                      Contains("field must have shape [B,64,R,R,R]"));
  }
  SECTION("too small for 4x4x4 cells") {
    CHECK_THROWS_WITH(field_readout(torch::zeros({1, 64, 3, 3, 3})), Contains("R >= 4"));
  }
  SECTION("too large for the kernels' 32-bit indexing (an expanded view: no memory)") {
    const auto huge = torch::zeros({1, 64, 1, 1, 1}).expand({1, 64, 1025, 1025, 1025});
    CHECK_THROWS_WITH(field_readout(huge), Contains("R must be <= 1024"));
  }
  SECTION("double precision") {
    CHECK_THROWS_WITH(field_readout(field.to(torch::kDouble)), Contains("field must be float32"));
  }
  SECTION("out of the wrong dtype") {
    auto wrong = torch::empty({2, kReadoutWidth}, torch::kDouble);
    CHECK_THROWS_WITH(field_readout_out(field, wrong), Contains("out must be a float32 tensor"));
  }
  SECTION("non-contiguous out") {
    auto wide = torch::empty({2, 2 * kReadoutWidth});
    auto strided = wide.slice(1, 0, 2 * kReadoutWidth, 2);
    CHECK_THROWS_WITH(field_readout_out(field, strided), Contains("out must be contiguous"));
  }
  SECTION("a wrongly sized out is resized") {
    auto small = torch::empty({1, 3});
    field_readout_out(field, small);
    CHECK(small.sizes() == out.sizes());
    CHECK(torch::equal(small, field_readout(field)));
  }
}

TEST_CASE("field_readout_out makes no tensor allocation in steady state", "[ops][readout]") {
  const int64_t B = GENERATE(1, 3);
  const int64_t R = GENERATE(16, 32);
  CAPTURE(B, R);
  const auto field = make_field(B, R, 6);
  auto out = torch::empty({B, kReadoutWidth});
  field_readout_out(field, out);  // warm-up: grows the per-thread scratch

  AllocationCounter counter;
  {  // the counter does see allocations: a positive control
    auto probe = torch::empty({4});
    REQUIRE(counter.count() == 1);
  }
  counter.reset();
  const void* data = out.data_ptr();
  for (int i = 0; i < 5; ++i) field_readout_out(field, out);
  CHECK(counter.count() == 0);
  CHECK(out.data_ptr() == data);

  counter.reset();  // the functional form allocates exactly its result
  const auto result = field_readout(field);
  CHECK(counter.count() == 1);
  CHECK(torch::equal(result, out));
}
