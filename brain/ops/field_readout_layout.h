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

// Where each block of the row starts. Plain integers, not enumerators: a summary's index is
// added to kReadoutSummary, arithmetic C++20 deprecates between two enumerations.
// [64 ch][64 cells] mean F, then [64][64] mean |F|
constexpr int64_t kReadoutCellMean = 0;
constexpr int64_t kReadoutCellAbsMean = kReadoutCellMean + kReadoutChannels * kReadoutCells;
// [64] each: mean F, mean |F|, mean F^2, max |F|
constexpr int64_t kReadoutChannelMean = kReadoutCellAbsMean + kReadoutChannels * kReadoutCells;
constexpr int64_t kReadoutChannelAbsMean = kReadoutChannelMean + kReadoutChannels;
constexpr int64_t kReadoutChannelSqMean = kReadoutChannelAbsMean + kReadoutChannels;
constexpr int64_t kReadoutChannelMaxAbs = kReadoutChannelSqMean + kReadoutChannels;
// [64 ch][6] mean F
constexpr int64_t kReadoutFaceMean = kReadoutChannelMaxAbs + kReadoutChannels;
// [64 cells] mean over the 64 channels of the cell's mean |F| (spatial pooling's activity).
constexpr int64_t kReadoutCellActivity = kReadoutFaceMean + kReadoutChannels * kReadoutFaces;
// [kSummaryCount]: the whole-field scalars below
constexpr int64_t kReadoutSummary = kReadoutCellActivity + kReadoutCells;
constexpr int64_t kReadoutWidth = kReadoutSummary + 8;

// The whole-field scalars at kReadoutSummary + i:
// mean |F| over all 64 channels (telemetry field_information); max |F| (telemetry max_activation)
constexpr int64_t kSummaryAbsMean = 0;
constexpr int64_t kSummaryMaxAbs = 1;
// mean |F[0:32]| (step 9's offset); mean |F[0:48]| (step 5's info)
constexpr int64_t kSummaryContentAbsMean = 2;
constexpr int64_t kSummaryActivityAbsMean = 3;
// var(F[0:48]) over all its elements, unbiased (step 5)
constexpr int64_t kSummaryActivityVar = 4;
// mean F[0:32] on face x = R-1 minus on face x = 0 (step 10); likewise along y and z
constexpr int64_t kSummaryGradientX = 5;
constexpr int64_t kSummaryGradientY = 6;
constexpr int64_t kSummaryGradientZ = 7;
constexpr int64_t kSummaryCount = 8;
static_assert(kReadoutWidth == kReadoutSummary + kSummaryCount, "the summary ends the row");

// Cell i (0..3) along an axis of length R covers [readout_cell_lo, readout_cell_hi).
inline constexpr int64_t readout_cell_lo(int64_t i, int64_t R) { return (i * R) / 4; }
inline constexpr int64_t readout_cell_hi(int64_t i, int64_t R) { return ((i + 1) * R + 3) / 4; }

// One call of fieldbrain::field_readout_out as its kernels take it (brain/ops/field_readout.h).
struct FieldReadoutArgs {
  const float* field = nullptr;  // [B,64,R,R,R], contiguous
  float* out = nullptr;          // [B, kReadoutWidth]
  int64_t batch = 0, resolution = 0;
};

}  // namespace ops
}  // namespace fieldbrain
