// fieldbrain's fused read-out operator: every small statistic of the field that the end of the
// cycle needs (docs/cycle.md steps 8-10: spatial pooling, next-input prediction, the motors'
// face gradients), step 5's information terms and the telemetry's mean|F| / max|F|, from ONE
// pass over the field: fieldbrain::field_readout and field_readout_out (the declarations below).
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
#include "brain/ops/op_entry.h"

namespace fieldbrain {
namespace ops {

// The declarations (brain/ops/op_entry.h): schema, C++ signature, checks.
struct FieldReadoutOut {
  static constexpr const char* kName = "field_readout_out";
  static constexpr const char* kSchema =
      "field_readout_out(Tensor field, Tensor(a!) out) -> Tensor(a!)";
  using Signature = at::Tensor&(const at::Tensor&, at::Tensor&);
  // The kernels' arguments, and the copy of a non-contiguous field they read.
  struct Prepared : FieldReadoutArgs {
    using Args = FieldReadoutArgs;
    at::Tensor field_copy;
  };
  static Prepared prepare(c10::DeviceType device, const at::Tensor& field, at::Tensor& out);
};
struct FieldReadout : Allocating<FieldReadoutOut> {
  static constexpr const char* kName = "field_readout";
  static at::Tensor empty_result(const at::Tensor& field);
};
inline constexpr OpEntry<FieldReadout> field_readout{};
inline constexpr OpEntry<FieldReadoutOut> field_readout_out{};

// Instruction set the CPU read-out runs with ("avx512", "avx2" or "default"); FIELDBRAIN_ISA
// caps it as for the field step.
std::string field_readout_cpu_isa();

}  // namespace ops
}  // namespace fieldbrain
