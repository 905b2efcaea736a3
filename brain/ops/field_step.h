// fieldbrain's fused field-step operator (docs/cycle.md step 7, items 1-8), registered with the
// dispatcher as
//   fieldbrain::field_step(Tensor field, Tensor noise, Tensor wave, Tensor ef, Tensor scalars) -> Tensor
//   fieldbrain::field_step_out(Tensor field, Tensor noise, Tensor wave, Tensor ef,
//                              Tensor scalars, Tensor(a!) out) -> Tensor(a!)
// with the contract of fieldbrain::field_step_reference (brain/field_dynamics.h): shapes
// field [B,64,R,R,R], noise [B,48,R,R,R], wave [B,R,R,R], ef [B,R,R,R], scalars [B,8]
// (decay, drive, explore, sigma, has_ef, 3 reserved), all float32 on one device; returns the
// field after the global periodic diffusion. Matches the reference to ~1e-6 per step.
//
// Memory: field_step_out allocates no tensor when `out` is a contiguous float32 tensor of the
// field's shape that does not overlap the inputs and the inputs are contiguous (a wrongly
// sized `out` is resized, non-contiguous inputs are copied). The CPU kernel's scratch is a
// per-thread buffer (~1 MiB at R=32) that grows on first use and is reused afterwards, so the
// steady state makes no heap allocation at all. `out` must not alias `field` (checked).
//
// The functions below call the op through the dispatcher (any device with a kernel). From
// Python or TorchScript: torch.ops.load_library("libfieldbrain_ops.so"), then
// torch.ops.fieldbrain.field_step(...).
#pragma once

#include <string>

#include <ATen/core/Tensor.h>

namespace fieldbrain {
namespace ops {

at::Tensor field_step(const at::Tensor& field, const at::Tensor& noise, const at::Tensor& wave,
                      const at::Tensor& ef, const at::Tensor& scalars);

at::Tensor& field_step_out(const at::Tensor& field, const at::Tensor& noise,
                           const at::Tensor& wave, const at::Tensor& ef,
                           const at::Tensor& scalars, at::Tensor& out);

// Instruction set the CPU kernel runs with ("avx512", "avx2" or "default", the widest the CPU
// supports); FIELDBRAIN_ISA=avx2 or FIELDBRAIN_ISA=default in the environment caps it.
std::string field_step_cpu_isa();

}  // namespace ops
}  // namespace fieldbrain
