// The per-robot arithmetic of fieldbrain::spontaneous_wave_out (docs/cycle.md step 7.2):
//   wave[x,y,z] = sum over valid w of sin(phi + (wv_w . (x,y,z)) / 3)
// shared by the CPU and CUDA kernels. Plain C++ with FIELDBRAIN_HOST_DEVICE functions over raw
// pointers (no LibTorch or CUDA headers), so nvcc compiles the CUDA kernel from it alone.
//
// Two evaluations of the same formula, equal up to float rounding (~1e-6 absolute; the wave
// enters the field scaled by 0.001 drive):
//  - wave_at: one voxel, the ATen expression of FieldDynamics::compute_wave (one sinf per valid
//    wave vector); the CUDA kernel runs it with one thread per voxel.
//  - wave_axis_tables + wave_row: the angle-addition form the CPU kernel uses. sin(a + b)
//    = sin a cos b + cos a sin b splits the angle into x, y and z parts, so a robot needs only
//    3 R sines and cosines per wave vector (computed in double, then rounded) and each voxel
//    costs two products and two sums per wave: no transcendental in the voxel loop.
#pragma once

#include <cmath>
#include <cstdint>

#include "brain/ops/philox.h"  // FIELDBRAIN_HOST_DEVICE

namespace fieldbrain {
namespace ops {
namespace wave {

constexpr int kMaxWaves = 5;  // wave_vectors [B,5,3], wave_mask [B,5]

// wave at voxel (x, y, z) of one robot: wv [5,3] and mask [5] of the robot, phase = 0.1 n.
FIELDBRAIN_HOST_DEVICE float wave_at(const float* wv, const float* mask, float phase, int x, int y,
                                     int z) {
  float sum = 0.f;
  for (int w = 0; w < kMaxWaves; ++w) {
    if (mask[w] == 0.f) continue;
    const float dot = (wv[3 * w] * static_cast<float>(x) + wv[3 * w + 1] * static_cast<float>(y)) +
                      wv[3 * w + 2] * static_cast<float>(z);
    sum += sinf(dot / 3.f + phase);
  }
  return sum;
}

// Per-axis tables of one robot for R voxels per axis, laid out [axis][w][sin|cos][R]
// (6 kMaxWaves R floats): axis 0 holds sin/cos(phase + wv_w0 x / 3), axis 1 sin/cos(wv_w1 y / 3),
// axis 2 sin/cos(wv_w2 z / 3). Returns the number of valid waves n; their tables are the first
// n (masked-out vectors are skipped, so the order of valid ones is kept).
inline int wave_axis_tables(const float* wv, const float* mask, float phase, int R, float* tables) {
  int n = 0;
  for (int w = 0; w < kMaxWaves; ++w) {
    if (mask[w] == 0.f) continue;
    for (int axis = 0; axis < 3; ++axis) {
      float* s = tables + ((axis * kMaxWaves + n) * 2) * R;
      float* c = s + R;
      const double k = static_cast<double>(wv[3 * w + axis]) / 3.0;
      const double shift = axis == 0 ? static_cast<double>(phase) : 0.0;
      for (int i = 0; i < R; ++i) {
        const double a = shift + k * static_cast<double>(i);
        s[i] = static_cast<float>(std::sin(a));
        c[i] = static_cast<float>(std::cos(a));
      }
    }
    ++n;
  }
  return n;
}

// Row (x, y) of the wave, R values in z, from the tables of wave_axis_tables (n valid waves).
inline void wave_row(const float* tables, int n, int R, int x, int y, float* out) {
  for (int z = 0; z < R; ++z) out[z] = 0.f;
  for (int w = 0; w < n; ++w) {
    const float* sx = tables + ((0 * kMaxWaves + w) * 2) * R;
    const float* sy = tables + ((1 * kMaxWaves + w) * 2) * R;
    const float* sz = tables + ((2 * kMaxWaves + w) * 2) * R;
    // angle of the row: A = phase + (wx x + wy y) / 3
    const float sa = sx[x] * sy[R + y] + sx[R + x] * sy[y];
    const float ca = sx[R + x] * sy[R + y] - sx[x] * sy[y];
    const float* szs = sz;
    const float* szc = sz + R;
    for (int z = 0; z < R; ++z) out[z] += sa * szc[z] + ca * szs[z];
  }
}

}  // namespace wave

// One call of fieldbrain::spontaneous_wave_out as its kernels take it (brain/ops/spontaneous_wave.h).
struct SpontaneousWaveArgs {
  const float* wave_vectors = nullptr;  // [B,5,3]
  const float* wave_mask = nullptr;     // [B,5]
  const float* phase = nullptr;         // [B], element b at phase[b * phase_stride]
  int64_t phase_stride = 1;
  float* wave = nullptr;                // [B,R,R,R]
  int64_t batch = 0, resolution = 0;
};

}  // namespace ops
}  // namespace fieldbrain
