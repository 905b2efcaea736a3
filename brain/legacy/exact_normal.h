// at::normal_ on a contiguous float32 tensor of >= 16 values, drawn without ATen's per-value
// generator call: the same mt19937 stream (the generator's own engine, stepped here in bulk and
// handed back), the same 24-bit uniforms, and the Box-Muller transform of ATen's AVX2 kernel
// (normal_fill_16_AVX2: a Cephes-style log and sincos over 8 lanes, with the fused multiply-adds
// its build has; sixteen lanes, the same operations, on CPUs with AVX-512F), so every value and the
// generator's state after the draw are ATen's, bit for bit.
//
// ATen picks the transform by its CPU capability (AVX2: the vector one; DEFAULT or AVX512: a
// scalar one) and the release may compile it otherwise, so the first call checks this process's
// ATen against it on probe draws (several sizes, the generator's state after each); where they
// differ in one bit the fill declines and the caller draws with ATen.
// test/legacy/exact_math_test.cpp holds it against at::normal_ over many draws.
#pragma once

#include <ATen/core/Generator.h>

#include <cstdint>

namespace fieldbrain::legacy {

// Whether exact_normal_fill reproduces this process's at::normal_ (probed once).
bool exact_normal_available();

// x[0..n) = at::normal_(mean, std, gen) on a contiguous float32 tensor of n >= 16 values.
// Returns false, drawing nothing, where exact_normal_available() is false or n < 16: then draw
// with ATen.
bool exact_normal_fill(float* x, int64_t n, double mean, double std, at::Generator& gen);

// The same fill, never declining (n >= 16): for the probe and the tests.
void exact_normal_fill_unchecked(float* x, int64_t n, double mean, double std,
                                 at::Generator& gen);

// The Box-Muller transform alone on x[0..n) (n a multiple of 32) as the fill applies it to its
// uniforms: sixteen values at a time (eight lanes, AVX2) or, with `wide` on a CPU with
// AVX-512F, 32 at a time in sixteen lanes (the fill's choice there). For the tests, which hold
// the two to the same floats; false, doing nothing, where the asked width cannot run here.
bool exact_box_muller(float* x, int64_t n, float mean, float std, bool wide);

}  // namespace fieldbrain::legacy
