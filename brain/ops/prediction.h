// fieldbrain's fused prediction operators (docs/cycle.md steps 1 and 8-11 on the fast path),
// schemas and C++ signatures: the declarations below.
//   prediction_score, step 1: scores the last prediction. For robots with n >= 1 (facts' cycle
//     column) last_err = sensors - pred and conf moves towards the score; conf = 0.5 for n = 0.
//   prediction_act, steps 8-11 from the fused read-out of the field after step 7
//     (brain/ops/field_readout.h):
//     spatial pooling (active, n_active, temporal), the push of this cycle's input into the
//     `recent` ring (slot = its count before the cycle mod 3, from facts: the caller advances
//     the ring's host count afterwards), the hierarchical predictions hpred = tanh(enc_k @ W[k]),
//     the timescale confidences from the herr rings (their counts after step 2, derived from
//     facts), pred and pc, the motors (the noise of streams 3 and 4 made in the kernel from
//     noise_key, the same numbers philox_normal_out gives) and the motor echo into channels
//     62, 63 of the field.
// Shapes: sensors, pred, last_err [B,S]; facts [B,K] int64 (brain/ops/cycle_layout.h); n_active,
// conf, explore [B]; readout [B, kReadoutWidth]; noise_key [B,2] int64; W [B,4,16,S]; herr_k
// [B,50]; lin [R]; recent [B,3,S]; active [B,64]; temporal [B,16,64]; hpred [B,4,S];
// motor [B,M]; field [B,64,R,R,R]. float32 unless said, all contiguous on one device.
//
// Memory: both operators mutate their (a!) arguments in place and allocate nothing: a
// non-contiguous or wrongly shaped argument is refused (c10::Error naming it), never copied.
// No host sync: every per-robot decision is taken in the kernel from facts.
#pragma once

#include <ATen/core/Tensor.h>

#include "brain/ops/op_entry.h"
#include "brain/ops/prediction_math.h"

namespace fieldbrain {
namespace ops {

// The declarations (brain/ops/op_entry.h): schema, C++ signature, checks.
struct PredictionScore {
  static constexpr const char* kName = "prediction_score";
  static constexpr const char* kSchema =
      "prediction_score(Tensor sensors, Tensor facts, Tensor n_active, Tensor pred, "
      "Tensor(a!) conf, Tensor(b!) last_err) -> ()";
  using Signature = void(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                         const at::Tensor&, at::Tensor&, at::Tensor&);
  static prediction::ScoreArgs prepare(c10::DeviceType device, const at::Tensor& sensors,
                                       const at::Tensor& facts, const at::Tensor& n_active,
                                       const at::Tensor& pred, at::Tensor& conf,
                                       at::Tensor& last_err);
};
struct PredictionAct {
  static constexpr const char* kName = "prediction_act";
  static constexpr const char* kSchema =
      "prediction_act(Tensor readout, Tensor facts, Tensor noise_key, Tensor sensors, Tensor W, "
      "Tensor herr0, Tensor herr1, Tensor herr2, Tensor herr3, Tensor explore, Tensor lin, "
      "Tensor(a!) recent, Tensor(b!) active, Tensor(c!) n_active, Tensor(d!) temporal, "
      "Tensor(e!) hpred, Tensor(f!) pred, Tensor(g!) pc, Tensor(h!) motor, Tensor(i!) field) -> ()";
  using Signature = void(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                         const at::Tensor&, const at::Tensor&, const at::Tensor&,
                         const at::Tensor&, const at::Tensor&, const at::Tensor&,
                         const at::Tensor&, const at::Tensor&, at::Tensor&, at::Tensor&,
                         at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&,
                         at::Tensor&, at::Tensor&);
  static prediction::ActArgs prepare(
      c10::DeviceType device, const at::Tensor& readout, const at::Tensor& facts,
      const at::Tensor& noise_key, const at::Tensor& sensors, const at::Tensor& W,
      const at::Tensor& herr0, const at::Tensor& herr1, const at::Tensor& herr2,
      const at::Tensor& herr3, const at::Tensor& explore, const at::Tensor& lin,
      at::Tensor& recent, at::Tensor& active, at::Tensor& n_active, at::Tensor& temporal,
      at::Tensor& hpred, at::Tensor& pred, at::Tensor& pc, at::Tensor& motor, at::Tensor& field);
};
inline constexpr OpEntry<PredictionScore> prediction_score{};
inline constexpr OpEntry<PredictionAct> prediction_act{};

}  // namespace ops
}  // namespace fieldbrain
