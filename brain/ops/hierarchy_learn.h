// fieldbrain's hierarchy-learning operators: the fast path of docs/cycle.md steps 2, 3 and 7.10
// (brain/hierarchical_predictor.h, brain/prediction_error_field.h), each one pass that mutates
// the brain's buffers in place and creates no tensor: hierarchy_observe_, hierarchy_apply_ and
// error_field_update_ (schemas and C++ signatures: the declarations below).
// Shapes: field [B,64,R,R,R], sensors and e [B,S], facts [B,16] int64 (brain/ops/cycle_layout.h),
// hpred [B,4,S], hist [B,1000,S], herr_k [B,50], W [B,4,16,S], pending
// [B, hierarchy::pending_width(S)] (brain/ops/hierarchy_learn_math.h), ef [B,R,R,R], has_ef and
// boost [B]; float32 except facts, all contiguous on one device (refused otherwise: no copies).
//
// Per-robot decisions come from `facts` (n >= 1, ring counts before this cycle's pushes), so
// the launches are the same every cycle. The rings' host counts are the caller's to advance:
// hist for every robot, herr[k] where hierarchy::timescale_active(n, hist count + 1, k).
#pragma once

#include <ATen/core/Tensor.h>

#include "brain/ops/hierarchy_learn_math.h"
#include "brain/ops/op_entry.h"

namespace fieldbrain {
namespace ops {

// The declarations (brain/ops/op_entry.h): schema, C++ signature, checks.
//
// Step 2: pushes each robot's input to hist; for robots with n >= 1, the active timescales'
// errors (pushed to herr[k]), W += lr_k·outer(enc_k, e_k) with enc_k the means of the field's
// channels 16k..16k+15 (the field at cycle start), and the pending update of step 7.10 in
// `pending` (rewritten for every robot: nothing pending for n = 0).
struct HierarchyObserve {
  static constexpr const char* kName = "hierarchy_observe_";
  static constexpr const char* kSchema =
      "hierarchy_observe_(Tensor field, Tensor sensors, Tensor facts, Tensor hpred, "
      "Tensor(a!) hist, Tensor(b!) herr0, Tensor(c!) herr1, Tensor(d!) herr2, Tensor(e!) herr3, "
      "Tensor(f!) W, Tensor(g!) pending) -> ()";
  using Signature = void(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                         const at::Tensor&, const at::Tensor&, const at::Tensor&,
                         const at::Tensor&, const at::Tensor&, const at::Tensor&,
                         const at::Tensor&, const at::Tensor&);
  static HierarchyObserveArgs prepare(c10::DeviceType device, const at::Tensor& field,
                                      const at::Tensor& sensors, const at::Tensor& facts,
                                      const at::Tensor& hpred, const at::Tensor& hist,
                                      const at::Tensor& herr0, const at::Tensor& herr1,
                                      const at::Tensor& herr2, const at::Tensor& herr3,
                                      const at::Tensor& W, const at::Tensor& pending);
};

// Step 7.10: field += U_h, adding the pending cubes only (U_h is zero elsewhere).
struct HierarchyApply {
  static constexpr const char* kName = "hierarchy_apply_";
  static constexpr const char* kSchema = "hierarchy_apply_(Tensor(a!) field, Tensor pending) -> ()";
  using Signature = void(const at::Tensor&, const at::Tensor&);
  static HierarchyApplyArgs prepare(c10::DeviceType device, const at::Tensor& field,
                                    const at::Tensor& pending);
};

// Step 3 for robots with n >= 1 (others keep ef, has_ef and boost): ef from e = a - pred,
// has_ef = 1, boost = min(3, 1 + 4·mean|ef|).
struct ErrorFieldUpdate {
  static constexpr const char* kName = "error_field_update_";
  static constexpr const char* kSchema =
      "error_field_update_(Tensor e, Tensor facts, Tensor(a!) ef, Tensor(b!) has_ef, "
      "Tensor(c!) boost) -> ()";
  using Signature = void(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                         const at::Tensor&, const at::Tensor&);
  static ErrorFieldArgs prepare(c10::DeviceType device, const at::Tensor& e,
                                const at::Tensor& facts, const at::Tensor& ef,
                                const at::Tensor& has_ef, const at::Tensor& boost);
};

inline constexpr OpEntry<HierarchyObserve> hierarchy_observe_{};
inline constexpr OpEntry<HierarchyApply> hierarchy_apply_{};
inline constexpr OpEntry<ErrorFieldUpdate> error_field_update_{};

}  // namespace ops
}  // namespace fieldbrain
