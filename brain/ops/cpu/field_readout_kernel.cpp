// CPU kernel of fieldbrain::field_readout / field_readout_out: argument checks, the choice of
// the instruction-set variant, per-thread scratch and threading (at::parallel_for over robots x
// channels) around the per-channel pass of field_readout_passes.cpp, then the per-robot finish
// (cell activity and the whole-field summary, from the channel rows just written).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <string>
#include <vector>

#include "brain/ops/cpu/field_readout_passes.h"
#include "brain/ops/cpu/isa_choice.h"
#include "brain/ops/cpu/kernels.h"
#include "brain/ops/field_readout.h"

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace {

// The variant cpu/isa_choice.h picks (the same rule as the field step's kernel).
const FieldReadoutPasses& readout_passes() {
#if defined(FIELDBRAIN_OPS_AVX2)
  return table_for(chosen_cpu_isa(), isa_default::kReadoutPasses, isa_avx2::kReadoutPasses,
                   isa_avx512::kReadoutPasses);
#else
  return isa_default::kReadoutPasses;
#endif
}

float* readout_scratch(size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}

// The robot's cell activity and summary (field_readout_layout.h) from its channel entries.
void finish_robot(float* row, int64_t R) {
  for (int64_t cell = 0; cell < kReadoutCells; ++cell) {
    double s = 0.0;
    for (int64_t c = 0; c < kReadoutChannels; ++c)
      s += row[kReadoutCellAbsMean + c * kReadoutCells + cell];
    row[kReadoutCellActivity + cell] = static_cast<float>(s / kReadoutChannels);
  }
  auto channel_mean = [&](int64_t offset, int64_t channels) {
    double s = 0.0;
    for (int64_t c = 0; c < channels; ++c) s += row[offset + c];
    return s / static_cast<double>(channels);
  };
  auto face_mean = [&](int64_t face) {
    double s = 0.0;
    for (int64_t c = 0; c < 32; ++c) s += row[kReadoutFaceMean + c * kReadoutFaces + face];
    return s / 32.0;
  };
  float max_abs = 0.f;
  for (int64_t c = 0; c < kReadoutChannels; ++c)
    max_abs = std::max(max_abs, row[kReadoutChannelMaxAbs + c]);
  const double n = 48.0 * static_cast<double>(R * R * R);
  const double mean = channel_mean(kReadoutChannelMean, 48);
  const double square = channel_mean(kReadoutChannelSqMean, 48);
  float* summary = row + kReadoutSummary;
  summary[kSummaryAbsMean] = static_cast<float>(channel_mean(kReadoutChannelAbsMean, 64));
  summary[kSummaryMaxAbs] = max_abs;
  summary[kSummaryContentAbsMean] = static_cast<float>(channel_mean(kReadoutChannelAbsMean, 32));
  summary[kSummaryActivityAbsMean] = static_cast<float>(channel_mean(kReadoutChannelAbsMean, 48));
  summary[kSummaryActivityVar] = static_cast<float>((square - mean * mean) * n / (n - 1.0));
  summary[kSummaryGradientX] = static_cast<float>(face_mean(1) - face_mean(0));
  summary[kSummaryGradientY] = static_cast<float>(face_mean(3) - face_mean(2));
  summary[kSummaryGradientZ] = static_cast<float>(face_mean(5) - face_mean(4));
}

}  // namespace

void run(const FieldReadoutArgs& args) {
  const int64_t B = args.batch, R = args.resolution;
  if (B == 0) return;
  const float* F = args.field;
  float* rows = args.out;
  const FieldReadoutPasses& p = readout_passes();
  const size_t scratch = p.channel_scratch_floats(R);
  const int64_t V = R * R * R;
  at::parallel_for(0, B * kReadoutChannels, 1, [&](int64_t begin, int64_t end) {
    float* s = readout_scratch(scratch);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / kReadoutChannels, c = t % kReadoutChannels;
      p.readout_channel(F + t * V, R, c, rows + b * kReadoutWidth, s);
    }
  });
  for (int64_t b = 0; b < B; ++b) finish_robot(rows + b * kReadoutWidth, R);
}

}  // namespace cpu

std::string field_readout_cpu_isa() { return cpu::readout_passes().isa; }

}  // namespace ops
}  // namespace fieldbrain
