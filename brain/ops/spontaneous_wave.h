// fieldbrain's fused spontaneous-wave operator (docs/cycle.md step 7.2): the wave of every
// robot written into a preallocated buffer: fieldbrain::spontaneous_wave_out (the declaration
// below). wave_vectors [B,5,3] and wave_mask [B,5] contiguous float32 (FieldDynamics' buffers);
// phase [B] float32 = 0.1 n per robot, any stride (CycleContext::phase is a column of the static
// value table); wave [B,R,R,R] contiguous float32, overwritten with
//   wave[b,x,y,z] = sum over w with mask[b,w] != 0 of sin(phase[b] + (wv[b,w] . (x,y,z)) / 3).
// Equal to FieldDynamics::compute_wave's ATen expression up to float rounding (~1e-6).
//
// Memory: nothing is allocated and nothing is resized; a wrong shape, dtype, device or a
// non-contiguous wave/wave_vectors/wave_mask is refused with an error naming the argument.
// Reads the phases on the device (no host sync).
#pragma once

#include <ATen/core/Tensor.h>

#include "brain/ops/op_entry.h"
#include "brain/ops/spontaneous_wave_math.h"

namespace fieldbrain {
namespace ops {

// The declaration (brain/ops/op_entry.h): schema, C++ signature, checks.
struct SpontaneousWaveOut {
  static constexpr const char* kName = "spontaneous_wave_out";
  static constexpr const char* kSchema =
      "spontaneous_wave_out(Tensor wave_vectors, Tensor wave_mask, Tensor phase, "
      "Tensor(a!) wave) -> ()";
  using Signature = void(const at::Tensor&, const at::Tensor&, const at::Tensor&, at::Tensor&);
  static SpontaneousWaveArgs prepare(c10::DeviceType device, const at::Tensor& wave_vectors,
                                     const at::Tensor& wave_mask, const at::Tensor& phase,
                                     at::Tensor& wave);
};
inline constexpr OpEntry<SpontaneousWaveOut> spontaneous_wave_out{};

}  // namespace ops
}  // namespace fieldbrain
