// The arrays of one fused-imprint call (brain/ops/sensory_imprint.h) as raw pointers, shared by
// the CPU kernel and the CUDA launcher. Plain C++ with no LibTorch or CUDA headers, so nvcc
// compiles the kernels from it alone.
#pragma once

#include <cstdint>

#include "brain/ops/cycle_layout.h"  // the fact and value columns, kMapCapacity
#include "brain/ops/philox.h"        // FIELDBRAIN_HOST_DEVICE

namespace fieldbrain {
namespace ops {

// The drive terms of the imprint strength, in the order of the op's `drive` list.
enum ImprintDriveTerm : int {
  kDriveConf = 0,
  kDriveHasEf,
  kDriveBoost,
  kDrivePrevImp,
  kDrivePrevAmp,
  kDriveTerms
};

// Per-robot float scratch of the op: act [V], fp [V], res [V], the unit pattern p [S], then one
// partial maximum of the empty score per x-plane [R]. (res is written only on the projection's
// support and must otherwise stay 0: it is zeroed when the scratch is made.)
struct ImprintScratchLayout {
  int64_t V, S, R;
  FIELDBRAIN_HOST_DEVICE int64_t act() const { return 0; }
  FIELDBRAIN_HOST_DEVICE int64_t fp() const { return V; }
  FIELDBRAIN_HOST_DEVICE int64_t res() const { return 2 * V; }
  FIELDBRAIN_HOST_DEVICE int64_t pattern() const { return 3 * V; }
  FIELDBRAIN_HOST_DEVICE int64_t plane_max() const { return 3 * V + S; }
  FIELDBRAIN_HOST_DEVICE int64_t floats() const { return 3 * V + S + R; }
};

// Borrowed pointers, on the device the kernel runs on. Per-robot rows: robot b's row starts at
// b * <name>_stride (elements); inner dimensions are contiguous.
struct ImprintArrays {
  int64_t batch = 0, sensory_dim = 0, resolution = 0;
  // Written.
  float* field = nullptr;      // [B,64,R,R,R] contiguous
  float* occ = nullptr;        // [B,R,R,R] contiguous
  float* map_data = nullptr;   // [B,100,S] contiguous
  int64_t* map_loc = nullptr;  // [B,100,3] contiguous
  float* strength = nullptr;   // [B], stride strength_stride
  int64_t strength_stride = 1;
  float* scratch = nullptr;  // [B, >= ImprintScratchLayout::floats()]
  int64_t scratch_stride = 0;
  int32_t* plane_argmax = nullptr;  // [B, >= R]: the x-plane's first maximum of the empty score
  int64_t plane_argmax_stride = 0;
  // Read.
  const float* sensors = nullptr;  // [B,S]
  int64_t sensors_stride = 0;
  const int64_t* facts = nullptr;  // [B, kFactColumns] (brain/ops/cycle_layout.h)
  int64_t facts_stride = 0;
  const float* values = nullptr;  // [B, kValueColumns]
  int64_t values_stride = 0;
  const float* drive[kDriveTerms] = {};  // [B] each
  int64_t drive_stride[kDriveTerms] = {};
  const int64_t* noise_key = nullptr;  // [B,2] contiguous: (seed, cycle); eps_loc is drawn from it
  // Static tables (not per robot): the projection's support voxels (ascending) with their
  // entries in CSR form, the voxels within +-1 of the support (ascending), the blob weights.
  const int32_t* support_voxel = nullptr;  // [n_support]
  const int32_t* support_begin = nullptr;  // [n_support + 1]
  const int32_t* entry_sensor = nullptr;   // [n_entries]
  const float* entry_weight = nullptr;     // [n_entries]
  const int32_t* dilated_voxel = nullptr;  // [n_dilated]
  const float* blob_weight = nullptr;      // [125]
  int32_t n_support = 0, n_dilated = 0;
};

// One robot's sizes and its rows of the scratch, the facts and the map, as the per-robot step of
// either kernel sees them. Sizes are int (index math inside a robot is 32-bit: R <= 256, so
// 64 R^3 < 2^31); the robot's own offsets are 64-bit.
struct ImprintRobotRows {
  FIELDBRAIN_HOST_DEVICE ImprintRobotRows(const ImprintArrays& a, int64_t b)
      : b(b),
        R(static_cast<int>(a.resolution)),
        V(R * R * R),
        S(static_cast<int>(a.sensory_dim)),
        layout{V, S, R},
        row(a.scratch + b * a.scratch_stride),
        act(row + layout.act()),
        fp(row + layout.fp()),
        res(row + layout.res()),
        p(row + layout.pattern()),
        facts(a.facts + b * a.facts_stride),
        map(a.map_data + b * kMapCapacity * S),
        map_loc(a.map_loc + b * kMapCapacity * 3) {}

  int64_t b;
  int R, V, S;
  ImprintScratchLayout layout;
  float* row;
  const float* act;
  const float* fp;
  float* res;
  float* p;  // the unit pattern
  const int64_t* facts;
  float* map;        // the remembered patterns, S per slot
  int64_t* map_loc;  // their places, 3 per slot
};

}  // namespace ops
}  // namespace fieldbrain
