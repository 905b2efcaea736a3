// Realistic random inputs of the field step (the contract of brain/field_dynamics.h), for the
// operator's tests and the benchmark: a field drawn like the brain's construction (docs/cycle.md
// construction step 1 and 4), standard-normal noise, a wave made like the spontaneous
// activity's (3-5 unit wave vectors), an error field shaped like docs/cycle.md step 3's, and
// per-robot scalars in the ranges the modulation step produces.
#pragma once

#include <cmath>
#include <cstdint>

#include <torch/torch.h>

#include "brain/ops/field_step.h"
#include "brain/ops/philox.h"

namespace fieldbrain {
namespace ops {

struct FieldStepInputs {
  torch::Tensor field;    // [B,64,R,R,R]
  torch::Tensor noise;    // [B,48,R,R,R]
  torch::Tensor wave;     // [B,R,R,R]
  torch::Tensor ef;       // [B,R,R,R]
  torch::Tensor scalars;  // [B,8]
};

// content_scale multiplies channels 0..47 (> ~2.5 makes the squash of docs/cycle.md 7.7 trigger,
// < ~1.8 keeps it off); has_ef: 0 or 1 for every robot, or -1 to alternate 1, 0, 1, ...
inline FieldStepInputs make_field_step_inputs(int64_t B, int64_t R, uint64_t seed,
                                              double content_scale = 1.0, int has_ef = 1) {
  // Each draw is its own Philox stream of `seed` (docs/cycle.md "Randomness"), cycle 0.
  uint32_t stream = 1000;
  const auto key = torch::tensor({static_cast<int64_t>(seed), int64_t{0}}, torch::kLong).view({1, 2});
  auto randn = [&](at::IntArrayRef shape) {
    auto t = torch::empty(shape, torch::kFloat);
    auto flat = t.view({1, -1});
    ops::philox_normal_out(key, stream++, flat);
    return t;
  };
  auto rand = [&](at::IntArrayRef shape) {
    auto t = torch::empty(shape, torch::kFloat);
    float* p = t.data_ptr<float>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = philox::uniform(seed, 0, stream, static_cast<uint64_t>(i));
    ++stream;
    return t;
  };
  FieldStepInputs in;
  in.field = randn({B, 64, R, R, R}) * 0.2 + 0.05;
  in.field.slice(1, 0, 48).mul_(content_scale);
  in.field.slice(1, 48, 52).copy_(randn({B, 4, R, R, R}) * 0.1 + 2.0);
  in.field.slice(1, 52, 56).copy_(randn({B, 4, R, R, R}) * 0.05);
  in.field.slice(1, 56, 60).copy_(randn({B, 4, R, R, R}) * 0.05);
  in.field.slice(1, 60, 64).copy_(randn({B, 4, R, R, R}) * 0.2);
  in.noise = randn({B, 48, R, R, R});

  const auto coord = torch::arange(R, torch::kFloat);
  const auto cx = coord.view({R, 1, 1}), cy = coord.view({1, R, 1}), cz = coord.view({1, 1, R});
  in.wave = torch::zeros({B, R, R, R});
  auto n_waves = torch::empty({B}, torch::kLong);
  for (int64_t b = 0; b < B; ++b) {
    n_waves[b] = 3 + static_cast<int64_t>(philox::block_words(seed, 0, stream, static_cast<uint32_t>(b)).w[0] % 3u);
  }
  ++stream;
  const auto phase = rand({B}) * 10.0;
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t w = 0; w < n_waves[b].item<int64_t>(); ++w) {
      auto v = randn({3});
      v = v / (v.norm() + 1e-8);
      in.wave[b] += torch::sin(phase[b] + (v[0] * cx + v[1] * cy + v[2] * cz) / 3.0);
    }
  }

  // Mostly the small uniform term 0.05 * mean|e|, with a few strong (positive) or weakly
  // negative cubes.
  in.ef = 0.05 * rand({B, 1, 1, 1}).expand({B, R, R, R}).clone();
  const auto blobs = rand({B, R, R, R}) < 0.03;
  in.ef += blobs.to(torch::kFloat) * (rand({B, R, R, R}) * 1.2 - 0.2);

  in.scalars = torch::zeros({B, 8});
  in.scalars.select(1, 0).copy_(0.999 - 0.01 * rand({B}));  // decay
  in.scalars.select(1, 1).copy_(rand({B}));                 // drive
  in.scalars.select(1, 2).copy_(0.3 + 0.7 * rand({B}));     // explore
  // sigma: docs/cycle.md 7.6 gives 0.01 at birth, ~0.1 after 10^4 cycles, 0.3 at most. Kept <= 0.15:
  // the sparsity term 0.5 * mean_c(|X4| < 0.1) * sigma of item 5 jumps by sigma/96 when one
  // of a voxel's 48 values crosses 0.1, and rounding-level differences between two correct
  // implementations flip such voxels now and then; 0.05 * sigma/96 stays below 1e-4 here.
  in.scalars.select(1, 3).copy_(0.01 + 0.14 * rand({B}));
  for (int64_t b = 0; b < B; ++b) {
    in.scalars[b][4] = has_ef < 0 ? static_cast<float>((b + 1) % 2) : static_cast<float>(has_ef);
  }
  return in;
}

}  // namespace ops
}  // namespace fieldbrain
