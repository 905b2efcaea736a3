// fieldbrain's fused imprint (docs/cycle.md step 4 on the fast path): fieldbrain::sensory_imprint_
// (schema and C++ signature: the declaration below).
// Per robot b (all decisions inside the kernel, from facts[b]): when facts[b, kFactHasInput]
// is 0 nothing changes and strength[b] = 0. Otherwise it computes the strength, the unit
// pattern p, the maps act = mean_c|F| and fp = mean(F[0:8]) (one pass over the field), picks
// the location (a remembered one, the resonant one, or the empty one), marks occ when the empty
// one was chosen, writes p and the location into map slot facts[b, kFactMapCount] mod 100
// (the caller then advances the ring's count for the robots with input) and adds the blob to
// all 64 channels.
//
// eps_loc, the empty strategy's noise, is not an input: the first pass draws element v of
// robot b's stream philox::kStreamEmptyLocation from noise_key[b] = (seed, cycle) (the numbers
// ops::philox_normal_out(noise_key, 1, eps_loc) would hold) where it uses it.
//
// Arguments: field [B,64,R,R,R], occ [B,R,R,R], noise_key [B,2] int64, map_data [B,100,S] float32
// and map_loc [B,100,3] int64, all contiguous; strength [B] float32; scratch [B, >=
// ImprintScratchLayout::floats()] float32 (res part zero at creation) and plane_argmax [B, >= R]
// int32 with contiguous rows; sensors [B,S], facts [B,kFactColumns] int64, values
// [B,kValueColumns] float32 with contiguous rows; drive = (conf, has_ef, boost, prev_imp,
// prev_amp), each [B] float32 of any stride; tables = make_imprint_tables(S, R). Nothing is
// allocated and nothing is copied: a wrong layout is refused with a message naming the argument.
//
// Two passes (CPU: two parallel loops; CUDA: two launches): one over (robot, x-plane) for the
// maps and each plane's first maximum of the empty score, one per robot for everything else.
// The resonant projection is evaluated on its support only (27 voxels per sensor), the
// smoothing on the voxels within +-1 of it: elsewhere the cosine map is 0, so a maximum above
// 0.3 can only lie there.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "brain/ops/op_entry.h"
#include "brain/ops/sensory_imprint_arrays.h"

namespace fieldbrain {
namespace ops {

// The static tables of the resonant projection P (docs/cycle.md "Static tables") and the blob,
// in the op's `tables` order: support_voxel int32, support_begin int32, entry_sensor int32,
// entry_weight float32, dilated_voxel int32, blob_weight float32 [125]. On the CPU; move them
// to the brain's device.
std::vector<at::Tensor> make_imprint_tables(int64_t sensory_dim, int64_t resolution);

// The declaration (brain/ops/op_entry.h): schema, C++ signature, checks.
struct SensoryImprint {
  static constexpr const char* kName = "sensory_imprint_";
  static constexpr const char* kSchema =
      "sensory_imprint_(Tensor(a!) field, Tensor(b!) occ, Tensor(c!) map_data, "
      "Tensor(d!) map_loc, Tensor(e!) strength, Tensor(f!) scratch, Tensor(g!) plane_argmax, "
      "Tensor sensors, Tensor facts, Tensor values, Tensor[] drive, Tensor noise_key, "
      "Tensor[] tables) -> ()";
  using Signature = void(at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&,
                         at::Tensor&, at::Tensor&, const at::Tensor&, const at::Tensor&,
                         const at::Tensor&, at::TensorList, const at::Tensor&, at::TensorList);
  static ImprintArrays prepare(c10::DeviceType device, at::Tensor& field, at::Tensor& occ,
                               at::Tensor& map_data, at::Tensor& map_loc, at::Tensor& strength,
                               at::Tensor& scratch, at::Tensor& plane_argmax,
                               const at::Tensor& sensors, const at::Tensor& facts,
                               const at::Tensor& values, at::TensorList drive,
                               const at::Tensor& noise_key, at::TensorList tables);
};
inline constexpr OpEntry<SensoryImprint> sensory_imprint_{};

}  // namespace ops
}  // namespace fieldbrain
