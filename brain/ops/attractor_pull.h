// fieldbrain's fused reward-attractor operators (docs/cycle.md steps 6 and 7.9); schemas and C++
// signatures: the declarations below.
//   attractor_record_: bank [B,A,64,R,R,R], field [B,64,R,R,R] float32, slot [B] int64 (any
//     stride): for every robot b with slot[b] >= 0, bank[b, slot[b]] = field[b]. Robots with
//     slot -1 are untouched.
//   attractor_pull_: next [B,64,R,R,R] float32 (the field after step 7.8), shadow
//     [B,A,64,R,R,R] int16 and shadow_scale [B,A,64] float32 (the bank's 16-bit copy: each
//     channel's levels and step, brain/ops/attractor_math.h), weights [B,A,2] float32
//     (attractor_math.h), workspace [B, 64(1+2A)] float64 scratch, source [B,64,R,R,R] float32,
//     slot [B] int64 (any stride): first step 6's store, bank[b, slot[b]] = source[b] and its
//     shadow from source[b] for every robot with slot[b] >= 0 (attractor_record_ in the same
//     call, so the slot is written while the pull reads the bank anyway: no pass of its own);
//     then field[b] = next[b] + sum over slots j with weight != 0 of (P[b,j] - next[b]) * c_j,
//     P being the slot as its shadow holds it (levels * step), every coefficient from `next`
//     (the field before any pull), for EVERY robot (a robot no slot pulls gets field[b] =
//     next[b]): the pull writes the field, so step 7.10 needs no copy of its own. Both the
//     coefficients' sums and the move read the shadow (half the bytes of the bank); the float
//     bank is only written (what a save holds, and what the shadow is rebuilt from). `field`
//     may be `next` (in place) and `source` may be `field` (read before the field is written).
//     The shadow must hold the rule's copy of the bank in every slot that pulls: the owner
//     rebuilds it whenever the bank is set from outside (brain/cycle_fused.cpp).
// Both run the same launches whatever the table holds (a slot's weight, not the host, decides
// whether it pulls), allocate nothing, and never sync with the host: what a CUDA graph needs.
// Sums are accumulated in double.
#pragma once

#include <ATen/core/Tensor.h>

#include "brain/ops/attractor_math.h"
#include "brain/ops/op_entry.h"

namespace fieldbrain {
namespace ops {

// The declarations (brain/ops/op_entry.h): schema, C++ signature, checks.
struct AttractorRecord {
  static constexpr const char* kName = "attractor_record_";
  static constexpr const char* kSchema =
      "attractor_record_(Tensor(a!) bank, Tensor field, Tensor slot) -> ()";
  using Signature = void(at::Tensor&, const at::Tensor&, const at::Tensor&);
  static AttractorRecordArgs prepare(c10::DeviceType device, at::Tensor& bank,
                                     const at::Tensor& field, const at::Tensor& slot);
};
struct AttractorPull {
  static constexpr const char* kName = "attractor_pull_";
  static constexpr const char* kSchema =
      "attractor_pull_(Tensor(a!) field, Tensor next, Tensor(b!) bank, Tensor(c!) shadow, "
      "Tensor(d!) shadow_scale, Tensor weights, Tensor(e!) workspace, Tensor source, "
      "Tensor slot) -> ()";
  using Signature = void(at::Tensor&, const at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&,
                         const at::Tensor&, at::Tensor&, const at::Tensor&, const at::Tensor&);
  static AttractorPullArgs prepare(c10::DeviceType device, at::Tensor& field,
                                   const at::Tensor& next, at::Tensor& bank, at::Tensor& shadow,
                                   at::Tensor& shadow_scale, const at::Tensor& weights,
                                   at::Tensor& workspace, const at::Tensor& source,
                                   const at::Tensor& slot);
};
inline constexpr OpEntry<AttractorRecord> attractor_record_{};
inline constexpr OpEntry<AttractorPull> attractor_pull_{};

}  // namespace ops
}  // namespace fieldbrain
