// torch::dot of two contiguous float32 vectors, as this process's ATen computes it, without an
// ATen call (no dispatch, no result tensor, no item()): LibTorch's CPU dot of floats is BLAS's
// sdot_ where it is built with BLAS (Debian's is), so this calls the sdot_ that LibTorch's own
// call resolves to (looked up at run time in the process's global symbols). The first call
// checks it against torch::dot on probe vectors (lengths 1-600, the novelty's 512 among them);
// where one bit differs, or no sdot_ is found, it declines and the caller takes torch::dot.
// The novelty's 200 dot products a cycle were 200 ATen calls. test/legacy/exact_math_test.cpp
// holds it against torch::dot.
#pragma once

#include <cstdint>

namespace fieldbrain::legacy {

// Whether exact_dot reproduces this process's torch::dot (probed once).
bool exact_dot_available();

// torch::dot(a, b) of 1 <= n < 2^31 contiguous floats; only where exact_dot_available().
float exact_dot(const float* a, const float* b, int64_t n);

// out[k] = torch::dot(a, bs[k]) for `count` vectors of n floats; only where
// exact_dot_available(). Where this process's sdot_ sums as the reference BLAS does (each
// product rounded, added to one running float sum in index order: probed once against sdot_
// and torch::dot on many lengths), eight of those sums run side by side, each in its own
// order (a sum in order is a chain of dependent additions: one alone leaves the adders idle);
// elsewhere one sdot_ call each. test/legacy/exact_dots_test.cpp holds it against torch::dot.
void exact_dots(const float* a, const float* const* bs, int64_t count, int64_t n, float* out);

}  // namespace fieldbrain::legacy
