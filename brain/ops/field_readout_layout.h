// Layout of fieldbrain::field_readout's output: one float32 row of kReadoutWidth values per robot,
// every small statistic of the field F [64,R,R,R] that the end of the cycle (docs/cycle.md
// steps 8-10), step 5's information terms and the telemetry read. Plain C++ (no LibTorch), so
// the CUDA kernel shares it.
//
// Cells are the 4x4x4 cells of adaptive_avg_pool3d(F, 4): cell i along an axis covers
// [floor(i R/4), ceil((i+1) R/4)) (cells overlap when R is not a multiple of 4), numbered
// x-major: cell = (cx*4 + cy)*4 + cz. Faces are the planes x = 0, x = R-1, y = 0, y = R-1,
// z = 0, z = R-1, in that order. Every mean is over the voxels it names.
#pragma once

#include <cstdint>

namespace fieldbrain {
namespace ops {

constexpr int64_t kReadoutChannels = 64;
constexpr int64_t kReadoutCells = 64;
constexpr int64_t kReadoutFaces = 6;

enum ReadoutOffset : int64_t {
  kReadoutCellMean = 0,  // [64 ch][64 cells] mean F
  kReadoutCellAbsMean = kReadoutCellMean + kReadoutChannels * kReadoutCells,  // [64][64] mean |F|
  kReadoutChannelMean = kReadoutCellAbsMean + kReadoutChannels * kReadoutCells,  // [64] mean F
  kReadoutChannelAbsMean = kReadoutChannelMean + kReadoutChannels,               // [64] mean |F|
  kReadoutChannelSqMean = kReadoutChannelAbsMean + kReadoutChannels,             // [64] mean F^2
  kReadoutChannelMaxAbs = kReadoutChannelSqMean + kReadoutChannels,              // [64] max |F|
  kReadoutFaceMean = kReadoutChannelMaxAbs + kReadoutChannels,  // [64 ch][6] mean F
  // [64 cells] mean over the 64 channels of the cell's mean |F| (spatial pooling's activity).
  kReadoutCellActivity = kReadoutFaceMean + kReadoutChannels * kReadoutFaces,
  kReadoutSummary = kReadoutCellActivity + kReadoutCells,  // [kSummaryCount], see ReadoutSummary
  kReadoutWidth = kReadoutSummary + 8,
};

// The whole-field scalars at kReadoutSummary + i.
enum ReadoutSummary : int64_t {
  kSummaryAbsMean = 0,          // mean |F| over all 64 channels (telemetry field_information)
  kSummaryMaxAbs = 1,           // max |F| (telemetry max_activation)
  kSummaryContentAbsMean = 2,   // mean |F[0:32]| (step 9's offset)
  kSummaryActivityAbsMean = 3,  // mean |F[0:48]| (step 5's info)
  kSummaryActivityVar = 4,      // var(F[0:48]) over all its elements, unbiased (step 5)
  kSummaryGradientX = 5,        // mean F[0:32] on face x = R-1 minus on face x = 0 (step 10)
  kSummaryGradientY = 6,        // likewise along y
  kSummaryGradientZ = 7,        // likewise along z
  kSummaryCount = 8,
};

// Cell i (0..3) along an axis of length R covers [readout_cell_lo, readout_cell_hi).
inline constexpr int64_t readout_cell_lo(int64_t i, int64_t R) { return (i * R) / 4; }
inline constexpr int64_t readout_cell_hi(int64_t i, int64_t R) { return ((i + 1) * R + 3) / 4; }

}  // namespace ops
}  // namespace fieldbrain
