// The fused CPU read-out's per-channel pass, compiled once per instruction set (see
// field_readout_passes.h and field_step_passes.cpp for the scheme).
//
// A channel is streamed plane by plane (x), line by line (y), in vectors along z. Per plane the
// lines are added element-wise into one z-row per y-cell (so the cell sums are the same for every
// vector width), then each row is cut into its four z-cells and
// the cell sums go to double accumulators; the plane's own sum, |.| sum and square sum are
// vector accumulators over the plane's R lines, reduced to double at the end of the plane. So a
// float accumulation never spans more than one plane (R^2 / vector width terms per lane; for a
// cell, its extent along y, then along z).
#include "brain/ops/cpu/field_readout_passes.h"
#include "brain/ops/cpu/vector_pieces.h"

#include <ATen/cpu/vec/vec.h>

#include <algorithm>

#include "brain/ops/field_readout_layout.h"

#ifndef FIELDBRAIN_ISA_NAMESPACE
#error "compile with -DFIELDBRAIN_ISA_NAMESPACE=isa_<name>"
#endif

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace FIELDBRAIN_ISA_NAMESPACE {
// A named namespace: a unity build puts this file in one translation unit with the field
// step's passes, whose helpers have the same names.
namespace readout {

using pieces::for_vectors;
using pieces::kW;
using pieces::load;
using pieces::store;
using pieces::Vec;
inline double sum_lanes(const Vec& v) {
  float lanes[kW];
  v.store(lanes);
  double s = 0.0;
  for (int64_t i = 0; i < kW; ++i) s += lanes[i];
  return s;
}
inline float max_lanes(const Vec& v) {
  float lanes[kW];
  v.store(lanes);
  float m = 0.f;
  for (int64_t i = 0; i < kW; ++i) m = std::max(m, lanes[i]);
  return m;
}

size_t channel_scratch_floats(int64_t resolution) { return static_cast<size_t>(8 * resolution); }

void readout_channel(const float* ch, int64_t R, int64_t c, float* row, float* scratch) {
  const int64_t P = R * R;
  int64_t lo[4], hi[4];
  for (int64_t i = 0; i < 4; ++i) {
    lo[i] = readout_cell_lo(i, R);
    hi[i] = readout_cell_hi(i, R);
  }
  // The cells (one or two: they overlap when 4 does not divide R) containing coordinate t.
  auto cells_of = [&](int64_t t, int64_t* first, int64_t* last) {
    *first = 0;
    while (t >= hi[*first]) ++*first;
    *last = *first;
    while (*last + 1 < 4 && lo[*last + 1] <= t) ++*last;
  };
  float* row_sum = scratch;          // [4 y-cells][R]: this plane's lines added per y-cell
  float* row_abs = scratch + 4 * R;  // same for |F|
  double cell_sum[kReadoutCells] = {}, cell_abs[kReadoutCells] = {};
  double total = 0.0, total_abs = 0.0, total_sq = 0.0;
  double face[kReadoutFaces] = {};
  float max_abs = 0.f;

  for (int64_t x = 0; x < R; ++x) {
    std::fill(row_sum, row_sum + 8 * R, 0.f);
    Vec v_sum(0.f), v_abs(0.f), v_sq(0.f), v_max(0.f);
    double z_first = 0.0, z_last = 0.0;
    for (int64_t y = 0; y < R; ++y) {
      const float* line = ch + x * P + y * R;
      int64_t y0, y1;
      cells_of(y, &y0, &y1);
      Vec line_sum(0.f);
      for_vectors(R, [&](int64_t z, int64_t n) {
        const Vec v = load(line + z, n);
        const Vec a = v.abs();
        line_sum = line_sum + v;
        v_abs = v_abs + a;
        v_sq = at::vec::fmadd(v, v, v_sq);
        v_max = at::vec::maximum(v_max, a);
        for (int64_t yj = y0; yj <= y1; ++yj) {
          store(load(row_sum + yj * R + z, n) + v, row_sum + yj * R + z, n);
          store(load(row_abs + yj * R + z, n) + a, row_abs + yj * R + z, n);
        }
      });
      v_sum = v_sum + line_sum;
      if (y == 0) face[2] += sum_lanes(line_sum);
      if (y == R - 1) face[3] += sum_lanes(line_sum);
      z_first += line[0];
      z_last += line[R - 1];
    }
    const double plane = sum_lanes(v_sum);
    total += plane;
    total_abs += sum_lanes(v_abs);
    total_sq += sum_lanes(v_sq);
    max_abs = std::max(max_abs, max_lanes(v_max));
    if (x == 0) face[0] = plane;
    if (x == R - 1) face[1] = plane;
    face[4] += z_first;
    face[5] += z_last;
    int64_t x0, x1;
    cells_of(x, &x0, &x1);
    for (int64_t yj = 0; yj < 4; ++yj) {
      for (int64_t zk = 0; zk < 4; ++zk) {
        float s = 0.f, a = 0.f;  // a cell's extent along z: R/4 rounded up, at most 32
        for (int64_t z = lo[zk]; z < hi[zk]; ++z) {
          s += row_sum[yj * R + z];
          a += row_abs[yj * R + z];
        }
        for (int64_t xi = x0; xi <= x1; ++xi) {
          cell_sum[(xi * 4 + yj) * 4 + zk] += s;
          cell_abs[(xi * 4 + yj) * 4 + zk] += a;
        }
      }
    }
  }

  for (int64_t xi = 0; xi < 4; ++xi) {
    for (int64_t yj = 0; yj < 4; ++yj) {
      for (int64_t zk = 0; zk < 4; ++zk) {
        const int64_t cell = (xi * 4 + yj) * 4 + zk;
        const double n =
            static_cast<double>((hi[xi] - lo[xi]) * (hi[yj] - lo[yj]) * (hi[zk] - lo[zk]));
        row[kReadoutCellMean + c * kReadoutCells + cell] = static_cast<float>(cell_sum[cell] / n);
        row[kReadoutCellAbsMean + c * kReadoutCells + cell] =
            static_cast<float>(cell_abs[cell] / n);
      }
    }
  }
  const double V = static_cast<double>(P * R);
  row[kReadoutChannelMean + c] = static_cast<float>(total / V);
  row[kReadoutChannelAbsMean + c] = static_cast<float>(total_abs / V);
  row[kReadoutChannelSqMean + c] = static_cast<float>(total_sq / V);
  row[kReadoutChannelMaxAbs + c] = max_abs;
  for (int64_t f = 0; f < kReadoutFaces; ++f) {
    row[kReadoutFaceMean + c * kReadoutFaces + f] =
        static_cast<float>(face[f] / static_cast<double>(P));
  }
}

}  // namespace readout

extern const FieldReadoutPasses kReadoutPasses;
const FieldReadoutPasses kReadoutPasses = {
#if defined(CPU_CAPABILITY_AVX512)
    "avx512",
#elif defined(CPU_CAPABILITY_AVX2)
    "avx2",
#else
    "default",
#endif
    &readout::channel_scratch_floats, &readout::readout_channel};

}  // namespace FIELDBRAIN_ISA_NAMESPACE
}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
