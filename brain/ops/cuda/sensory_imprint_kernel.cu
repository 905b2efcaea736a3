// CUDA kernels of the fused imprint (brain/ops/sensory_imprint.h), raw CUDA C++ without LibTorch
// headers (see cuda/launchers.h). Three launches, stream-ordered, no host sync, no atomics:
//   1a. grid (voxel blocks, robot): one thread per voxel of every robot writes act and fp to
//       the scratch (the 64-channel pass, over every SM even for one robot);
//   1b. one block per (x-plane, robot): the plane's first maximum of the empty score from act
//       (eps_loc drawn per voxel from the robot's Philox stream 1), a shared-memory reduction;
//   2. one block of 1,024 threads per robot: strength and unit pattern (one thread), the
//      remembered-pattern search (a thread per slot), the resonant map on the projection's
//      support and its smoothing on the support's neighbourhood (threads over voxels), each
//      followed by a block argmax; then the choice, occ, the map slot and the blob (threads over
//      channel x offset).
// The arithmetic of 1a and 1b is brain/ops/split_reduction_math.h's (tested on the CPU).
// Robots without input (facts) return at once. Index math is 32-bit inside a robot (R <= 256:
// 64 R^3 < 2^31); only the robot's base offsets are 64-bit.
#include <cuda_runtime.h>

#include <cfloat>
#include <climits>

#include "brain/ops/cuda/launchers.h"
#include "brain/ops/sensory_imprint_math.h"
#include "brain/ops/split_reduction_math.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

using namespace imprint;

constexpr int kThreads = 256;

__device__ __forceinline__ bool robot_has_input(const ImprintArrays& a, int b) {
  return a.facts[static_cast<int64_t>(b) * a.facts_stride + kFactHasInput] != 0;
}

constexpr int kRobotThreads = 1024;  // imprint_robot_kernel's block

// First-maximum argmax over the block of Threads threads; every thread gets the result. sv/si:
// Threads entries.
template <int Threads = kThreads>
__device__ void block_argmax(float& v, int& i, float* sv, int* si) {
  const int t = threadIdx.x;
  sv[t] = v;
  si[t] = i;
  __syncthreads();
  for (int step = Threads / 2; step > 0; step /= 2) {
    if (t < step && beats(sv[t + step], si[t + step], sv[t], si[t])) {
      sv[t] = sv[t + step];
      si[t] = si[t + step];
    }
    __syncthreads();
  }
  v = sv[0];
  i = si[0];
  __syncthreads();
}

// 1a. grid (ceil(R^3 / 256), robot): one thread per voxel writes act and fp.
__global__ void imprint_maps_kernel(ImprintArrays a) {
  const int b = blockIdx.y;
  if (!robot_has_input(a, b)) return;
  const int R = static_cast<int>(a.resolution), V = R * R * R;
  const int v = static_cast<int>(blockIdx.x) * kThreads + threadIdx.x;
  if (v >= V) return;
  const ImprintScratchLayout layout{V, a.sensory_dim, R};
  float* row = a.scratch + static_cast<int64_t>(b) * a.scratch_stride;
  float act, fp;
  split::voxel_act_fp(a.field + static_cast<int64_t>(b) * 64 * V, V, v, &act, &fp);
  row[layout.act() + v] = act;
  row[layout.fp() + v] = fp;
}

// 1b. grid (x-plane, robot): the plane's first maximum of the empty score from act (one load
//     per voxel instead of the 64 channels).
__global__ void imprint_plane_max_kernel(ImprintArrays a) {
  const int x = blockIdx.x, b = blockIdx.y;
  if (!robot_has_input(a, b)) return;
  const int R = static_cast<int>(a.resolution), P = R * R, V = P * R;
  const ImprintScratchLayout layout{V, a.sensory_dim, R};
  float* row = a.scratch + static_cast<int64_t>(b) * a.scratch_stride;
  const float* act = row + layout.act();
  const float* occ = a.occ + static_cast<int64_t>(b) * V;
  const uint64_t seed = static_cast<uint64_t>(a.noise_key[2 * b]);
  const uint64_t cycle = static_cast<uint64_t>(a.noise_key[2 * b + 1]);
  float best = -FLT_MAX;
  int best_v = INT_MAX;
  bool any = false;
  for (int i = threadIdx.x; i < P; i += kThreads) {
    const int v = x * P + i;
    const float q = split::voxel_empty_score(act, occ, seed, cycle, v);
    if (!any || q > best) {
      best = q;
      best_v = v;
      any = true;
    }
  }
  __shared__ float sv[kThreads];
  __shared__ int si[kThreads];
  block_argmax(best, best_v, sv, si);
  if (threadIdx.x == 0) {
    row[layout.plane_max() + x] = best;
    a.plane_argmax[static_cast<int64_t>(b) * a.plane_argmax_stride + x] = best_v;
  }
}

// 1-2. Strength and the unit pattern, by thread 0 alone (S is small and the order fixed):
// the strength is also written to the op's output; the pattern goes to r.p.
__device__ void strength_and_pattern(const ImprintArrays& a, const ImprintRobotRows& r,
                                     float& s_strength, float& s_p_norm) {
  const int64_t b = r.b;
  auto drive = [&](int term) { return a.drive[term][b * a.drive_stride[term]]; };
  const float s =
      strength(a.values[b * a.values_stride + kValueReward], drive(kDrivePrevImp),
               drive(kDrivePrevAmp), drive(kDriveHasEf), drive(kDriveBoost), drive(kDriveConf));
  a.strength[b * a.strength_stride] = s;
  s_strength = s;
  const float* in = a.sensors + b * a.sensors_stride;
  const float denom = __fadd_rn(norm(in, r.S), 1e-8f);
  for (int j = 0; j < r.S; ++j) r.p[j] = __fdiv_rn(in[j], denom);
  const float pn = norm(r.p, r.S);
  s_p_norm = pn > kCosineEps ? pn : kCosineEps;
}

// 4. Existing: the block's most similar remembered pattern whose place is not crowded
// (INT_MAX for none), the same in every thread.
template <int Threads>
__device__ int existing_slot(const ImprintRobotRows& r, int64_t count, float p_norm, float* sv,
                             int* si) {
  const int t = threadIdx.x, R = r.R, S = r.S;
  const int valid = static_cast<int>(count < kMapCapacity ? count : kMapCapacity);
  float cos_best = -FLT_MAX;
  int slot_best = INT_MAX;
  for (int j = t; j < valid; j += Threads) {
    const float c = cosine(r.p, p_norm, r.map + j * S, S);
    const int64_t* l = r.map_loc + j * 3;
    const int v = static_cast<int>((l[0] * R + l[1]) * R + l[2]);
    if (c > kExistingCos && box_mean(r.act, R, v) < kExistingCrowded &&
        beats(c, j, cos_best, slot_best)) {
      cos_best = c;
      slot_best = j;
    }
  }
  block_argmax<Threads>(cos_best, slot_best, sv, si);
  return slot_best;
}

// 5. Resonant, on the projection's support, smoothed on its neighbourhood: the block's first
// maximum (sm_best, sm_loc), the same in every thread.
template <int Threads>
__device__ void resonant_place(const ImprintArrays& a, const ImprintRobotRows& r, float* sv,
                               int* si, float& sm_best, int& sm_loc) {
  const int t = threadIdx.x;
  for (int k = t; k < a.n_support; k += Threads) {
    const int v = a.support_voxel[k];
    r.res[v] = scalar_cosine(
        projection(r.p, a.entry_sensor, a.entry_weight, a.support_begin[k], a.support_begin[k + 1]),
        r.fp[v]);
  }
  __syncthreads();
  for (int k = t; k < a.n_dilated; k += Threads) {
    const int v = a.dilated_voxel[k];
    const float sm = smoothed(r.res, r.R, v);
    if (beats(sm, v, sm_best, sm_loc)) {
      sm_best = sm;
      sm_loc = v;
    }
  }
  block_argmax<Threads>(sm_best, sm_loc, sv, si);
}

// 6-8. Empty, the choice, occ and the map slot's place, by thread 0 alone; returns the place.
__device__ int choose_place(const ImprintArrays& a, const ImprintRobotRows& r, int64_t count,
                            int slot_best, float sm_best, int sm_loc) {
  const int R = r.R;
  const float* plane_max = r.row + r.layout.plane_max();
  const int32_t* plane_arg = a.plane_argmax + r.b * a.plane_argmax_stride;
  int empty_x = 0;
  for (int x = 1; x < R; ++x) {
    if (plane_max[x] > plane_max[empty_x]) empty_x = x;
  }
  int loc;
  if (slot_best != INT_MAX) {
    const int64_t* l = r.map_loc + slot_best * 3;
    loc = static_cast<int>((l[0] * R + l[1]) * R + l[2]);
  } else if (sm_best > kResonantAccept) {
    loc = sm_loc;
  } else {
    loc = plane_arg[empty_x];
    a.occ[r.b * r.V + loc] = 1.0f;
  }
  const int slot = static_cast<int>(count % kMapCapacity);
  r.map_loc[slot * 3 + 0] = loc / (R * R);
  r.map_loc[slot * 3 + 1] = (loc / R) % R;
  r.map_loc[slot * 3 + 2] = loc % R;
  return loc;
}

// 9. The blob of strength `strength_value` around `loc` on all 64 channels (threads over
// channel x offset).
template <int Threads>
__device__ void add_blob(const ImprintArrays& a, const ImprintRobotRows& r, int loc,
                         float strength_value) {
  const int t = threadIdx.x, R = r.R, V = r.V;
  const int lx = loc / (R * R), ly = (loc / R) % R, lz = loc % R;
  float* F = a.field + r.b * 64 * V;
  for (int e = t; e < 64 * kBlobVoxels; e += Threads) {
    const int c = e / kBlobVoxels, i = e % kBlobVoxels;
    int dx, dy, dz;
    blob_offset(i, dx, dy, dz);
    const int x = lx + dx, y = ly + dy, z = lz + dz;
    if (x < 0 || x >= R || y < 0 || y >= R || z < 0 || z >= R) continue;
    float* f = F + c * V + (x * R + y) * R + z;
    *f = __fadd_rn(*f, __fmul_rn(strength_value, a.blob_weight[i]));
  }
}

// 2. One block of Threads threads per robot (kRobotThreads: 1,024 rather than 256, so the
// resonant smoothing's 27-voxel sums and the blob take a quarter of the steps each; the same
// bits for any Threads: each result is one thread's, and every argmax is a first maximum).
template <int Threads>
__device__ void imprint_robot(const ImprintArrays& a) {
  const int b = blockIdx.x, t = threadIdx.x;
  if (!robot_has_input(a, b)) {
    if (t == 0) a.strength[static_cast<int64_t>(b) * a.strength_stride] = 0.0f;
    return;
  }
  const ImprintRobotRows r(a, b);
  __shared__ float sv[Threads];
  __shared__ int si[Threads];
  __shared__ float s_strength, s_p_norm;
  __shared__ int s_loc;

  if (t == 0) strength_and_pattern(a, r, s_strength, s_p_norm);
  __syncthreads();
  const int64_t count = r.facts[kFactMapCount];
  const int slot_best = existing_slot<Threads>(r, count, s_p_norm, sv, si);
  // Resonant only when no remembered place was found (that one wins); slot_best is the same in
  // every thread, so the whole block takes the same branch.
  float sm_best = -FLT_MAX;
  int sm_loc = INT_MAX;
  if (slot_best == INT_MAX) resonant_place<Threads>(a, r, sv, si, sm_best, sm_loc);
  if (t == 0) s_loc = choose_place(a, r, count, slot_best, sm_best, sm_loc);
  __syncthreads();
  const int slot = static_cast<int>(count % kMapCapacity);
  for (int j = t; j < r.S; j += Threads) r.map[slot * r.S + j] = r.p[j];
  add_blob<Threads>(a, r, s_loc, s_strength);
}

__global__ void __launch_bounds__(kRobotThreads, 1) imprint_robot_kernel(ImprintArrays a) {
  imprint_robot<kRobotThreads>(a);
}

}  // namespace

int launch(const ImprintArrays& a, void* stream_ptr) {
  if (a.batch == 0) return 0;
  cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const int64_t V = a.resolution * a.resolution * a.resolution;
  const dim3 voxels(static_cast<unsigned>((V + kThreads - 1) / kThreads), static_cast<unsigned>(a.batch));
  const dim3 planes(static_cast<unsigned>(a.resolution), static_cast<unsigned>(a.batch));
  imprint_maps_kernel<<<voxels, kThreads, 0, stream>>>(a);
  imprint_plane_max_kernel<<<planes, kThreads, 0, stream>>>(a);
  imprint_robot_kernel<<<static_cast<unsigned>(a.batch), kRobotThreads, 0, stream>>>(a);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
