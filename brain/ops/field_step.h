// fieldbrain's fused field-step operator (docs/cycle.md step 7, items 1-8): field_step and
// field_step_out (schemas and C++ signatures: the declarations below) with the contract of
// fieldbrain::field_step_reference (brain/field_dynamics.h): shapes field [B,64,R,R,R], noise
// [B,48,R,R,R], wave [B,R,R,R], ef [B,R,R,R], scalars [B,8] (decay, drive, explore, sigma, has_ef,
// 3 reserved), all float32 on one device; returns the field after the global periodic diffusion.
// Matches the reference to ~1e-6 per step.
//
// field_step_seeded and field_step_seeded_out are the same step with noise[b] = the Philox stream
// kStreamSpontaneous of robot b (brain/ops/philox.h): noise_key is int64 [B,2] = (seed, cycle) per
// robot on the field's device, and the kernels compute each noise value where they use it; no noise
// tensor exists. Equal to field_step(field, philox_normal_out(noise_key, 2, noise), ...) (tests
// check it). The per-cycle facts live in the key tensor, so a caller's launch sequence does not
// depend on host values (the key can be advanced on the device).
//
// Memory: field_step_out allocates no tensor when `out` is a contiguous float32 tensor of the
// field's shape that does not overlap the inputs and the inputs are contiguous (a wrongly
// sized `out` is resized, non-contiguous inputs are copied). The CPU kernel's scratch is a
// per-thread buffer (~1 MiB at R=32) that grows on first use and is reused afterwards, so the
// steady state makes no heap allocation at all. `out` must not alias `field` (checked).
//
// The entry points below call the op through the dispatcher (any device with a kernel). From
// Python or TorchScript: torch.ops.load_library("libfieldbrain_ops.so"), then
// torch.ops.fieldbrain.field_step(...).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "brain/ops/field_step_arrays.h"
#include "brain/ops/op_entry.h"
#include "brain/ops/philox.h"

namespace fieldbrain {
namespace ops {

// The declarations (brain/ops/op_entry.h): schema, C++ signature, checks. A prepared step keeps
// the copies of non-contiguous inputs that its kernels read.
struct FieldStepPrepared : FieldStepArrays {
  using Args = FieldStepArrays;
  at::Tensor copies[5];
};
struct FieldStepOut {
  static constexpr const char* kName = "field_step_out";
  static constexpr const char* kSchema =
      "field_step_out(Tensor field, Tensor noise, Tensor wave, Tensor ef, Tensor scalars, "
      "Tensor(a!) out) -> Tensor(a!)";
  using Signature = at::Tensor&(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                const at::Tensor&, const at::Tensor&, at::Tensor&);
  static FieldStepPrepared prepare(c10::DeviceType device, const at::Tensor& field,
                                   const at::Tensor& noise, const at::Tensor& wave,
                                   const at::Tensor& ef, const at::Tensor& scalars,
                                   at::Tensor& out);
};
// The same step with the spontaneous-activity noise made inside the kernel from the robots'
// (seed, cycle) (brain/ops/philox.h, stream kStreamSpontaneous): no noise tensor.
struct FieldStepSeededOut {
  static constexpr const char* kName = "field_step_seeded_out";
  static constexpr const char* kSchema =
      "field_step_seeded_out(Tensor field, Tensor noise_key, Tensor wave, Tensor ef, "
      "Tensor scalars, Tensor(a!) out) -> Tensor(a!)";
  using Signature = at::Tensor&(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                const at::Tensor&, const at::Tensor&, at::Tensor&);
  static FieldStepPrepared prepare(c10::DeviceType device, const at::Tensor& field,
                                   const at::Tensor& noise_key, const at::Tensor& wave,
                                   const at::Tensor& ef, const at::Tensor& scalars,
                                   at::Tensor& out);
};
// The allocating variants: the _out ones' schemas without `out`, returning a new tensor.
struct FieldStep : Allocating<FieldStepOut> {
  static constexpr const char* kName = "field_step";
  static at::Tensor empty_result(const at::Tensor& field);
};
struct FieldStepSeeded : Allocating<FieldStepSeededOut> {
  static constexpr const char* kName = "field_step_seeded";
  static at::Tensor empty_result(const at::Tensor& field);
};

// philox_normal_out: out is a contiguous float32 tensor [B, ...] on noise_key's device (never
// resized or allocated); element i of out[b] (flat index) = philox::normal(noise_key[b][0],
// noise_key[b][1], stream, i). CPU kernel vectorised per instruction set, CUDA kernel with one
// thread per Philox block; both read the key on the device (no host sync).
struct PhiloxNormalPrepared : PhiloxNormalArgs {
  using Args = PhiloxNormalArgs;
  at::Tensor key_copy;
};
struct PhiloxNormalOut {
  static constexpr const char* kName = "philox_normal_out";
  static constexpr const char* kSchema =
      "philox_normal_out(Tensor noise_key, int stream, Tensor(a!) out) -> Tensor(a!)";
  using Signature = at::Tensor&(const at::Tensor&, int64_t, at::Tensor&);
  static PhiloxNormalPrepared prepare(c10::DeviceType device, const at::Tensor& noise_key,
                                      int64_t stream, at::Tensor& out);
};

inline constexpr OpEntry<FieldStep> field_step{};
inline constexpr OpEntry<FieldStepOut> field_step_out{};
inline constexpr OpEntry<FieldStepSeeded> field_step_seeded{};
inline constexpr OpEntry<FieldStepSeededOut> field_step_seeded_out{};
inline constexpr OpEntry<PhiloxNormalOut> philox_normal_out{};

// Instruction set the CPU kernel runs with ("avx512", "avx2" or "default", the widest the CPU
// supports); FIELDBRAIN_ISA=avx2 or FIELDBRAIN_ISA=default in the environment caps it.
std::string field_step_cpu_isa();

}  // namespace ops
}  // namespace fieldbrain
