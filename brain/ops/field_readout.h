// fieldbrain's fused read-out operator: every small statistic of the field that the end of the
// cycle needs (docs/cycle.md steps 8-10: spatial pooling, next-input prediction, the motors'
// face gradients), step 5's information terms and the telemetry's mean|F| / max|F|, from ONE
// pass over the field. Registered with the dispatcher as
//   fieldbrain::field_readout(Tensor field) -> Tensor
//   fieldbrain::field_readout_out(Tensor field, Tensor(a!) out) -> Tensor(a!)
// field [B,64,R,R,R] float32 (4 <= R <= 1024); returns [B, kReadoutWidth] float32 with the
// layout of brain/ops/field_readout_layout.h. Means are accumulated in double from float
// partial sums over at most one x-plane (a cell's share of it for the cell means); at R = 32
// every entry is within 1e-6 relative of a double-precision computation
// (test/ops/field_readout_test.cpp).
//
// Memory: field_readout_out allocates no tensor when `out` is a contiguous float32 tensor of
// shape [B, kReadoutWidth] on the field's device (a wrongly sized out is resized) and the field
// is contiguous (otherwise it is copied). The CPU kernel's scratch is per thread (8 R floats),
// grown on first use.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "brain/ops/field_readout_layout.h"

namespace fieldbrain {
namespace ops {

at::Tensor field_readout(const at::Tensor& field);
at::Tensor& field_readout_out(const at::Tensor& field, at::Tensor& out);

// Instruction set the CPU read-out runs with ("avx512", "avx2" or "default"); FIELDBRAIN_ISA
// caps it as for the field step.
std::string field_readout_cpu_isa();

// Argument checks shared by the kernels (throw c10::Error naming the argument): field must be
// [B,64,R,R,R] float32 on a device of type `device`, 4 <= R <= 1024; returns {B, R}.
std::pair<int64_t, int64_t> check_field_readout_field(const at::Tensor& field,
                                                      c10::DeviceType device);
// Resizes `out` to [B, kReadoutWidth] if needed and checks it is contiguous float32 on the
// field's device, not overlapping it.
void prepare_field_readout_out(at::Tensor& out, const at::Tensor& field);

}  // namespace ops
}  // namespace fieldbrain
