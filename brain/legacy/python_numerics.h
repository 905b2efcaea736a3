// The original's host arithmetic where Python and numpy define the rounding: numpy's mean of a
// list (pairwise summation from 8 elements), Python's float ** int, truthy float compares.
// Header-only; every function is exact to the last bit against numpy 1.24 / CPython 3.11.
#pragma once

#include <cmath>
#include <cstddef>
#include <deque>
#include <vector>

namespace fieldbrain::legacy {

// numpy's pairwise sum of doubles (numpy/core/src/umath/loops_utils.h, @TYPE@_pairwise_sum),
// starting from 0.0 as np.add.reduce does for a 1-D float64 array.
inline double numpy_pairwise_sum(const double* a, std::ptrdiff_t n) {
  if (n < 8) {
    double res = 0.;
    for (std::ptrdiff_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    std::ptrdiff_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  std::ptrdiff_t n2 = n / 2;
  n2 -= n2 % 8;
  return numpy_pairwise_sum(a, n2) + numpy_pairwise_sum(a + n2, n - n2);
}

// np.mean(list_of_floats).
inline double numpy_mean(const std::vector<double>& v) {
  return numpy_pairwise_sum(v.data(), static_cast<std::ptrdiff_t>(v.size())) /
         static_cast<double>(v.size());
}

// np.mean(list(dq)[begin:end]) with Python slice bounds already resolved.
inline double numpy_mean_range(const std::deque<double>& dq, std::size_t begin, std::size_t end) {
  std::vector<double> v(dq.begin() + static_cast<std::ptrdiff_t>(begin),
                        dq.begin() + static_cast<std::ptrdiff_t>(end));
  return numpy_mean(v);
}

// Python's sum(list)/len(list) (sequential, from int 0).
inline double python_mean_range(const std::deque<double>& dq, std::size_t begin, std::size_t end) {
  double s = 0.0;
  for (std::size_t i = begin; i < end; ++i) s += dq[i];
  return s / static_cast<double>(end - begin);
}

// Python's float ** int (CPython calls the C library's pow).
inline double python_pow(double base, int exponent) { return std::pow(base, exponent); }

// Python's min(a, b) / max(a, b) for floats (the first argument wins ties).
inline double py_min(double a, double b) { return b < a ? b : a; }
inline double py_max(double a, double b) { return b > a ? b : a; }

// list(dq)[-k:] resolved to [begin, size).
template <class D>
std::size_t tail_begin(const D& dq, std::size_t k) {
  return dq.size() > k ? dq.size() - k : 0;
}

}  // namespace fieldbrain::legacy
