// Fused single-pass loops over the legacy field ([R,R,R,64] float32, contiguous, channels 0-47
// content, 48-63 dynamics parameters): each replaces a chain of ATen full-field ops (every op a
// walk over the 8 MB field at R = 32, most with a temporary) by one walk.
//
// Elementwise work keeps the original's float32 roundings op for op (the scalar factors rounded
// to float32 as ATen rounds a Python scalar, sigmoid/tanh of a strided 4-channel slice as
// ATen's scalar path computes them: expf, tanhf), so it is bit for bit the ATen expression.
// Reductions are too: they sum in ATen's own float32 order (aten_sums.h), because the original's
// trajectory is chaotic and a sum in another order (even in double) moved motors past 1e-5.
// test/legacy/field_loops_test.cpp holds every loop against the ATen expression it replaces.
#pragma once

#include <cstdint>

namespace fieldbrain::legacy {

// _apply_differential_decay of the content (channels 0-47 of `field`) then, with `noise` not
// null, the spontaneous activity ((noise * rate + waves * 2) * internal_drive) added:
// out [V,48]. noise [V,48] (randn), waves [V] (the travelling waves, already * 0.1).
void decay_spontaneous(const float* field, int64_t V, double global_decay, double decay_multiplier,
                       const float* noise, double spontaneous_rate, const float* waves,
                       double internal_drive, float* out);

// _apply_learned_diffusion of `content` [R^3,48] with `strengths` [R^3,4] (tanh(dynamics[4:8])
// * 0.1, axes x, y, z in channels 0-2; field_stencils' FMA chains, zero padding): out [R^3,48];
// with, from the same walk, the argument of _apply_coupling's tanh, out * sigmoid(field[...,
// 60]): drive [R^3,48] (field [R^3,64], the field before evolution). With `activate`, drive
// holds tanh of that argument instead, each value ATen's (exact_tanh.h: only where
// exact_tanh_available()).
void learned_diffusion_fused(const float* content, const float* strengths, int64_t R,
                             const float* field, float* out, float* drive, bool activate = false);

struct EvolveTail {
  float max_abs_content = 0.0f;  // max |content| of the result (NaN ignored)
  bool has_nan = false;          // a NaN anywhere in the result
};

// The rest of evolve_field, per voxel: _apply_coupling (content + neighbour_sum(activation, 0.1)
// * mean(coupling) * sigmoid(plasticity[1])), then _evolve_dynamics on the coupled content
// (energy, per-voxel variance, sparsity; momentum 0.95) blended with the error field's
// resource allocation when `resource_terms` is not null (PredictionErrorLearning's three mask
// terms [V,12], weights 1 - w and w), then the dynamics clamped to [-5, 5] (NaN kept).
// content, activation [R^3,48]; field [R^3,64] the field before evolution; out [R^3,64].
EvolveTail coupling_and_dynamics(const float* content, const float* activation,
                                 const float* field, int64_t R, double self_modification,
                                 double exploration, const float* resource_terms,
                                 double error_weight, float* out);

// One attractor's influence ((((P - F) * strength) * valence) * scale) * k, float32 as the
// original rounds it, stored into `total` (first) or added to it.
void attractor_term(float* total, const float* pattern, const float* field, int64_t n,
                    float strength, float valence, float scale, float k, bool first);
// x += t
void add_into(float* x, const float* t, int64_t n);
// out = unit * (pattern / norm): F.cosine_similarity's product of the two normalised rows.
void unit_products(const float* unit, const float* pattern, float norm, int64_t n, float* out);
// out = x * x (x.pow(2))
void squares(const float* x, int64_t n, float* out);
// out = x / d
void divided(const float* x, float d, int64_t n, float* out);

// torch.sum(torch.abs(x)) (as ATen sums it), max |x| (NaN ignored) and whether a NaN occurs,
// over n contiguous floats.
struct AbsStats {
  float sum = 0;
  float max = 0;
  bool has_nan = false;
};
AbsStats abs_stats(const float* x, int64_t n);
// x += add (x.add_(add)), then abs_stats of the result, in one walk.
AbsStats add_and_abs_stats(float* x, float add, int64_t n);
// The same over rows of `row` values where only the rows flagged in `live` hold values: every
// other row is taken as zeros (x.zero_() before the boxes were written), so it becomes 0 + add
// without a walk of its own to clear it.
AbsStats add_and_abs_stats(float* x, float add, int64_t n, int64_t row, const uint8_t* live);

// torch.sum(torch.abs(x[..., :channels])) of a [V,C] array: the abs is a fresh contiguous
// [V, channels] tensor, summed as one row.
float channel_abs_sum(const float* x, int64_t V, int64_t C, int64_t channels);

// channel_abs_sum and aten_strided_var (aten_sums.h) of the same [V,C] array's first `channels`
// channels, bit for bit each, in two walks instead of three.
struct ContentSums {
  float abs_sum = 0;
  float variance = 0;
};
ContentSums content_abs_sum_and_var(const float* x, int64_t V, int64_t C, int64_t channels);

// s + the sum over the rows' first `channels` values of (double(x) - mean)^2, added one value
// after another in memory order as one sequential double sum (aten_strided_var's sum), bit
// for bit that sequence, without its chain of dependent additions where that is exact (see
// the .cpp). [rows, row_stride] array.
double ordered_square_sum(double s, const float* x, int64_t rows, int64_t row_stride,
                          int64_t channels, double mean);

}  // namespace fieldbrain::legacy
