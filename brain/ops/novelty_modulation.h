// fieldbrain's fused modulation operator: docs/cycle.md step 5 (field state, novelty with the
// 512-element sample of the corner block against the 200-entry memory, the perr/pimp rings,
// plateau, smoothed confidence, cycles without input, drive/explore/amp/imp/decay,
// prev_imp/prev_amp) and step 7.6 (sigma), for every robot in ONE launch:
// fieldbrain::novelty_modulation_ (schema and C++ signature: the declaration below).
// Shapes (B robots, all on one device, float32 unless noted, contiguous except activity_stats):
//   field [B,64,R,R,R] (R >= 8; read: the corner block), last_err [B,S], activity_stats [B,>=2]
//   (rows of any stride, columns adjacent: mean|F[0:48]|, unbiased var(F[0:48]); a slice of the
//   read-out), facts [B,kFactColumns] int64 and value_facts [B,kValueColumns]
//   (brain/ops/cycle_layout.h: the cycle number, has-input, the ring counts BEFORE this cycle's
//   pushes and the cycles without input before this cycle's update), has_ef [B], boost [B];
//   mutated: nov [B,200,512], nov_ts [B,200] int64, perr [B,50], pimp [B,50], state: 13 tensors
//   [B] in the order of modulation::StateColumn (brain/ops/novelty_modulation_math.h), and
//   step_scalars [B,8]: the field step's scalars (decay, drive, explore, sigma BEFORE step 7.6,
//   has_ef, 0, 0, 0); sigma in `state` is left updated by step 7.6.
// Ring slots are written at `count mod N` with the counts from facts; the caller then advances
// the rings' host counts (nov and perr always, pimp when pimp_pushes(perr's count after its push),
// brain/ops/cycle_layout.h).
//
// Memory: allocates nothing (no tensor, no scratch); arguments that are not as above are
// refused with a c10::Error naming them, never copied.
#pragma once

#include <ATen/core/Tensor.h>

#include "brain/ops/novelty_modulation_math.h"
#include "brain/ops/op_entry.h"

namespace fieldbrain {
namespace ops {

// The declaration (brain/ops/op_entry.h): schema, C++ signature, checks.
struct NoveltyModulation {
  static constexpr const char* kName = "novelty_modulation_";
  static constexpr const char* kSchema =
      "novelty_modulation_(Tensor field, Tensor last_err, Tensor activity_stats, Tensor facts, "
      "Tensor value_facts, Tensor has_ef, Tensor boost, Tensor(a!) nov, Tensor(b!) nov_ts, "
      "Tensor(c!) perr, Tensor(d!) pimp, Tensor(e!)[] state, Tensor(f!) step_scalars) -> ()";
  using Signature = void(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                         const at::Tensor&, const at::Tensor&, const at::Tensor&,
                         const at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&,
                         at::TensorList, at::Tensor&);
  static modulation::ModulationArrays prepare(
      c10::DeviceType device, const at::Tensor& field, const at::Tensor& last_err,
      const at::Tensor& activity_stats, const at::Tensor& facts, const at::Tensor& value_facts,
      const at::Tensor& has_ef, const at::Tensor& boost, at::Tensor& nov, at::Tensor& nov_ts,
      at::Tensor& perr, at::Tensor& pimp, at::TensorList state, at::Tensor& step_scalars);
};
inline constexpr OpEntry<NoveltyModulation> novelty_modulation_{};

}  // namespace ops
}  // namespace fieldbrain
