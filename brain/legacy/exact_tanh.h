// torch.tanh of float32 values, as this process's ATen computes them, without an ATen call:
// exact_tanh_simd.h's vector tanh (LibTorch 1.13's AVX2 and AVX-512 value, every one of the
// 2^32 inputs), taken in place or inside the fused walks (field_loops.h). The first call
// checks it against at::tanh on probe values (a spread over all bit patterns, the special
// values and the cases that tell close variants of the algorithm apart); where one bit differs
// (another release, ATen's DEFAULT capability, a CPU without AVX2 + FMA) it declines and the
// caller takes ATen's tanh. test/legacy/exact_math_test.cpp holds it against at::tanh.
#pragma once

#include <cstdint>

namespace fieldbrain::legacy {

// Whether exact_tanh reproduces this process's at::tanh (probed once).
bool exact_tanh_available();

// Whether exact_tanh_inplace takes sixteen lanes at a time (AVX-512F, exact_tanh_avx512.h):
// then a walk of its own over a buffer beats tanh8 fused into another walk (its long chain of
// dependent operations fills the out-of-order window with half the lanes).
bool exact_tanh_is_wide();

// x[i] = tanh(x[i]) for n contiguous floats; only where exact_tanh_available().
void exact_tanh_inplace(float* x, int64_t n);

// The first `channels` (a multiple of 8) of each of `rows` rows `row_stride` apart, in place.
void exact_tanh_rows_inplace(float* x, int64_t rows, int64_t row_stride, int64_t channels);

}  // namespace fieldbrain::legacy
