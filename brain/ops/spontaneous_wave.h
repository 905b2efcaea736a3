// fieldbrain's fused spontaneous-wave operator (docs/cycle.md step 7.2): the wave of every
// robot written into a preallocated buffer, registered with the dispatcher as
//   fieldbrain::spontaneous_wave_out(Tensor wave_vectors, Tensor wave_mask, Tensor phase,
//                                    Tensor(a!) wave) -> ()
// wave_vectors [B,5,3] and wave_mask [B,5] contiguous float32 (FieldDynamics' buffers); phase
// [B] float32 = 0.1 n per robot, any stride (CycleContext::phase is a column of the static
// value table); wave [B,R,R,R] contiguous float32, overwritten with
//   wave[b,x,y,z] = sum over w with mask[b,w] != 0 of sin(phase[b] + (wv[b,w] . (x,y,z)) / 3).
// Equal to FieldDynamics::compute_wave's ATen expression up to float rounding (~1e-6).
//
// Memory: nothing is allocated and nothing is resized; a wrong shape, dtype, device or a
// non-contiguous wave/wave_vectors/wave_mask is refused with an error naming the argument.
// Reads the phases on the device (no host sync).
#pragma once

#include <ATen/core/Tensor.h>

namespace fieldbrain {
namespace ops {

void spontaneous_wave_out(const at::Tensor& wave_vectors, const at::Tensor& wave_mask,
                          const at::Tensor& phase, at::Tensor& wave);

// Argument checks shared by the kernels (throw c10::Error naming the argument); returns {B, R}.
std::pair<int64_t, int64_t> check_spontaneous_wave_args(const at::Tensor& wave_vectors,
                                                        const at::Tensor& wave_mask,
                                                        const at::Tensor& phase,
                                                        const at::Tensor& wave,
                                                        c10::DeviceType device);

}  // namespace ops
}  // namespace fieldbrain
