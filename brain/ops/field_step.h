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
//   fieldbrain::field_step_seeded(Tensor field, Tensor noise_key, Tensor wave, Tensor ef,
//                                 Tensor scalars) -> Tensor
//   fieldbrain::field_step_seeded_out(Tensor field, Tensor noise_key, Tensor wave, Tensor ef,
//                                     Tensor scalars, Tensor(a!) out) -> Tensor(a!)
// are the same step with noise[b] = the Philox stream kStreamSpontaneous of robot b
// (brain/ops/philox.h): noise_key is int64 [B,2] = (seed, cycle) per robot on the field's
// device, and the kernels compute each noise value where they use it; no noise tensor exists.
// Equal to field_step(field, philox_normal_out(noise_key, 2, noise), ...) (tests check it).
// The per-cycle facts live in the key tensor, so a caller's launch sequence does not depend
// on host values (the key can be advanced on the device).
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

at::Tensor field_step_seeded(const at::Tensor& field, const at::Tensor& noise_key,
                             const at::Tensor& wave, const at::Tensor& ef,
                             const at::Tensor& scalars);

at::Tensor& field_step_seeded_out(const at::Tensor& field, const at::Tensor& noise_key,
                                  const at::Tensor& wave, const at::Tensor& ef,
                                  const at::Tensor& scalars, at::Tensor& out);

// fieldbrain::philox_normal_out(Tensor noise_key, int stream, Tensor(a!) out) -> Tensor(a!):
// out is a contiguous float32 tensor [B, ...] on noise_key's device (never resized or
// allocated); element i of out[b] (flat index) = philox::normal(noise_key[b][0],
// noise_key[b][1], stream, i). CPU kernel vectorised per instruction set, CUDA kernel with
// one thread per Philox block; both read the key on the device (no host sync).
at::Tensor& philox_normal_out(const at::Tensor& noise_key, int64_t stream, at::Tensor& out);

// Instruction set the CPU kernel runs with ("avx512", "avx2" or "default", the widest the CPU
// supports); FIELDBRAIN_ISA=avx2 or FIELDBRAIN_ISA=default in the environment caps it.
std::string field_step_cpu_isa();

}  // namespace ops
}  // namespace fieldbrain
