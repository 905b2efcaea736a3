// The two passes of the fused CPU field step (docs/cycle.md step 7, items 1-8), as plain functions
// over raw float arrays. field_step_passes.cpp is compiled once per instruction set (baseline
// x86-64, AVX2+FMA and AVX-512) into separate namespaces; field_step_kernel.cpp picks one at run time
// and owns threading and scratch memory, so nothing here allocates or starts threads.
//
// Pass 1 (task = one robot, a slab of x planes [x0,x1)): decay + temporal shift, spontaneous
//   activity, learned diffusion, coupling, self-modification of the dynamics channels, NaN
//   repair and the clamp of channels 48..63. Writes Fn into `out` and the slab's max|Fn[0:48]|.
//   Neighbours are recomputed from the input in a halo of 2 planes, so slabs are independent.
//   Without a noise array (v.noise null) the slab makes the noise of each (channel, plane) it
//   reads from v.noise_key with fill_normals, into its scratch, except the planes around slab
//   boundaries, which the kernel makes once per call beforehand (HaloNoise below).
// Pass 2 (task = one robot, one channel): the squash decided from the pass-1 maxima (tanh of
//   channels 0..47 when max > 2) and the global periodic diffusion, in place in `out`,
//   streaming the channel once with a window of three planes in scratch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "brain/ops/cpu/philox_fill.h"
#include "brain/ops/field_step_arrays.h"

namespace fieldbrain {
namespace ops {
namespace cpu {

// The call's arrays, in host memory.
using FieldStepView = FieldStepArrays;

// Seeded noise of the planes next to the slab boundaries, made once per call before pass 1
// (every such plane is read by the two slabs that meet there; without this each slab would
// make its halo planes' noise again, ~12% more Philox work at R = 32 with two slabs).
// Boundary k = 1 .. slabs-1 sits at plane k * planes; its band is planes [k planes - 2,
// k planes + 2), stored at data + (((b (slabs-1) + k-1) * 48 + c) * 4 + j) * R^2 for plane
// k planes - 2 + j. Used only when planes >= 4 (bands do not overlap) and data is not null.
struct HaloNoise {
  const float* data = nullptr;
  int64_t planes = 0;
  int64_t slabs = 1;
  // The stored plane x of robot b, channel c, or null when x is in no band.
  const float* plane(int64_t b, int64_t c, int64_t x, int64_t R) const {
    if (data == nullptr) return nullptr;
    const int64_t k = (x + 2) / planes;  // the boundary at or just above x - 2
    if (k < 1 || k >= slabs || x < k * planes - 2 || x >= k * planes + 2) return nullptr;
    return data + (((b * (slabs - 1) + k - 1) * 48 + c) * 4 + (x - (k * planes - 2))) * R * R;
  }
};

// One instruction-set variant of the passes.
struct FieldStepPasses {
  const char* isa;
  // Floats of scratch pass1_slab needs for a slab of `planes` x planes (64-byte aligned start).
  size_t (*pass1_scratch_floats)(int64_t resolution, int64_t planes);
  // Per robot: max|ef| and min(0.5, mean|ef|) (the error-field weights of step 7.5).
  void (*ef_stats)(const FieldStepView& v, int64_t b, float* ef_max, float* ef_weight);
  // Writes out[b, :, x0:x1] = Fn (before the squash) and returns max|Fn[0:48]| over the slab.
  // Seeded: planes in a band of `halo` are read from it, the others made in the pass.
  float (*pass1_slab)(const FieldStepView& v, int64_t b, int64_t x0, int64_t x1, float ef_max,
                      float ef_weight, const HaloNoise& halo, float* scratch);
  // Floats of scratch pass2_channel needs.
  size_t (*pass2_scratch_floats)(int64_t resolution);
  // out[b,c] = periodic_diffusion(squash ? tanh(out[b,c]) : out[b,c]).
  void (*pass2_channel)(const FieldStepView& v, int64_t b, int64_t c, bool squash,
                        float* scratch);
  // The Philox normals of this instruction set (philox_fill.h).
  FillNormalsFn fill_normals;
  // The reward attractors' pull (docs/cycle.md step 7.9) over one channel of n floats f of a
  // robot and the same channel of the shadows q[0..live) of its pulling slots (16-bit levels,
  // brain/ops/attractor_math.h), each read once: sums[0] = |f|^2, sums[1 + 2l] = f.p_l,
  // sums[2 + 2l] = |p_l|^2 with p_l = q_l * scale[l] (float lanes of f and the levels over
  // runs of 256, each run's lanes added in double, the scale applied to the totals in double:
  // a fixed order for the variant).
  void (*attractor_sums)(const float* f, const int16_t* const* q, const float* scale,
                         int64_t live, int64_t n, double* sums);
  // out[i] = f[i] + sum_l coef[l] (q_l[i] * scale[l] - f[i]), the slots' terms added in slot
  // order; out may be f. With live = 0 a copy.
  void (*attractor_apply)(float* out, const float* f, const int16_t* const* q,
                          const float* scale, const float* coef, int64_t live, int64_t n);
  // dst[0..n) = the levels of src[0..n) by the shadow's rule (brain/ops/attractor_math.h);
  // returns the channel's step s.
  float (*attractor_to_shadow)(const float* src, int16_t* dst, int64_t n);
};

// The variant field_step_kernel.cpp chose for this CPU (also used by the philox_normal_out kernel).
const FieldStepPasses& chosen_passes();
// Every variant compiled in that this CPU can run (for tests: each must give the same bits).
std::vector<const FieldStepPasses*> runnable_passes();

// Defined by field_step_passes.cpp, compiled per instruction set.
namespace isa_default {
extern const FieldStepPasses kPasses;
}
namespace isa_avx2 {
extern const FieldStepPasses kPasses;
}
namespace isa_avx512 {
extern const FieldStepPasses kPasses;
}

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
