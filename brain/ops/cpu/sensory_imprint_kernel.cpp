// CPU kernel of fieldbrain::sensory_imprint_ (brain/ops/sensory_imprint.h): the argument checks,
// then two parallel loops. The first runs over (robot, x-plane): act = mean_c|F| and
// fp = mean(F[0:8]) for the plane's voxels (channel planes streamed in order, the sums
// vectorised by the compiler), then the plane's eps_loc (the vectorised Philox fill) and its
// first maximum of the empty score. The second
// runs over robots: the per-robot step of imprint_robot below. Robots without input are left
// alone by both. Allocates nothing.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <limits>
#include <vector>

#include "brain/ops/cpu/field_step_passes.h"
#include "brain/ops/cpu/kernels.h"
#include "brain/ops/sensory_imprint_math.h"

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace {

bool has_input(const ImprintArrays& a, int64_t b) {
  return a.facts[b * a.facts_stride + kFactHasInput] != 0;
}

// Per-thread room for one plane of eps_loc, grown on first use.
float* plane_noise(int64_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < static_cast<size_t>(floats)) buffer.resize(static_cast<size_t>(floats));
  return buffer.data();
}

// act, fp and the empty score's first maximum over x-plane x of robot b.
void plane_maps(const ImprintArrays& a, int64_t b, int64_t x) {
  const int64_t R = a.resolution, P = R * R, V = P * R;
  const ImprintScratchLayout layout{V, a.sensory_dim, R};
  float* row = a.scratch + b * a.scratch_stride;
  float* act = row + layout.act() + x * P;
  float* fp = row + layout.fp() + x * P;
  const float* F = a.field + b * 64 * V + x * P;
  {
    const float* c0 = F;
    for (int64_t i = 0; i < P; ++i) {
      act[i] = std::fabs(c0[i]);
      fp[i] = c0[i];
    }
  }
  for (int64_t c = 1; c < 64; ++c) {
    const float* ch = F + c * V;
    for (int64_t i = 0; i < P; ++i) act[i] += std::fabs(ch[i]);
    if (c < 8) {
      for (int64_t i = 0; i < P; ++i) fp[i] += ch[i];
    }
  }
  for (int64_t i = 0; i < P; ++i) {
    act[i] /= 64.0f;
    fp[i] /= 8.0f;
  }
  const float* occ = a.occ + b * V + x * P;
  // eps_loc of the plane: elements x*P .. x*P + P - 1 of the robot's stream, vectorised.
  float* eps = plane_noise(P);
  chosen_passes().fill_normals(static_cast<uint64_t>(a.noise_key[2 * b]),
                               static_cast<uint64_t>(a.noise_key[2 * b + 1]),
                               philox::kStreamEmptyLocation, static_cast<uint64_t>(x * P), P, eps);
  float best = -std::numeric_limits<float>::infinity();
  int64_t best_i = 0;
  for (int64_t i = 0; i < P; ++i) {
    const float q = imprint::empty_score(act[i], occ[i], eps[i]);
    if (q > best || (i == 0)) {
      best = q;
      best_i = i;
    }
  }
  row[layout.plane_max() + x] = best;
  a.plane_argmax[b * a.plane_argmax_stride + x] = static_cast<int32_t>(x * P + best_i);
}

// 1. Strength, also written to the op's strength output.
float imprint_strength_of(const ImprintArrays& a, int64_t b) {
  auto drive = [&](int term) { return a.drive[term][b * a.drive_stride[term]]; };
  const float s = imprint::strength(a.values[b * a.values_stride + kValueReward],
                                    drive(kDrivePrevImp), drive(kDrivePrevAmp), drive(kDriveHasEf),
                                    drive(kDriveBoost), drive(kDriveConf));
  a.strength[b * a.strength_stride] = s;
  return s;
}

// 2. The unit pattern into r.p; returns its norm (at least kCosineEps).
float imprint_unit_pattern(const ImprintArrays& a, const ImprintRobotRows& r) {
  const float* in = a.sensors + r.b * a.sensors_stride;
  const float denom = imprint::norm(in, r.S) + 1e-8f;
  for (int64_t j = 0; j < r.S; ++j) r.p[j] = in[j] / denom;
  float p_norm = imprint::norm(r.p, r.S);
  p_norm = p_norm > imprint::kCosineEps ? p_norm : imprint::kCosineEps;
  return p_norm;
}

// 4. Existing: the most similar remembered pattern whose place is not crowded; -1 for none.
int64_t imprint_existing_slot(const ImprintArrays& a, const ImprintRobotRows& r, float p_norm,
                              int64_t count) {
  const int64_t valid = count < imprint::kMapCapacity ? count : imprint::kMapCapacity;
  float best_cos = 0.0f;
  int64_t best_slot = -1;
  for (int64_t j = 0; j < valid; ++j) {
    const float c = imprint::cosine(r.p, p_norm, r.map + j * r.S, r.S);
    if (!(c > imprint::kExistingCos)) continue;
    const int64_t* l = r.map_loc + j * 3;
    if (!(imprint::box_mean(r.act, r.R, static_cast<int>((l[0] * r.R + l[1]) * r.R + l[2])) <
          imprint::kExistingCrowded))
      continue;
    if (best_slot < 0 || c > best_cos) {
      best_cos = c;
      best_slot = j;
    }
  }
  return best_slot;
}

// 5. Resonant, on the projection's support and its +-1 neighbourhood: the first maximum of the
// smoothed resonance (-inf when nothing is on the support) and its voxel.
struct ImprintResonance {
  float best_sm = -std::numeric_limits<float>::infinity();
  int64_t loc = 0;
};

ImprintResonance imprint_resonant_place(const ImprintArrays& a, const ImprintRobotRows& r) {
  for (int32_t k = 0; k < a.n_support; ++k) {
    const int32_t v = a.support_voxel[k];
    r.res[v] =
        imprint::scalar_cosine(imprint::projection(r.p, a.entry_sensor, a.entry_weight,
                                                   a.support_begin[k], a.support_begin[k + 1]),
                               r.fp[v]);
  }
  ImprintResonance best;
  for (int32_t k = 0; k < a.n_dilated; ++k) {
    const int32_t v = a.dilated_voxel[k];
    const float sm = imprint::smoothed(r.res, r.R, v);
    if (sm > best.best_sm) {
      best.best_sm = sm;
      best.loc = v;
    }
  }
  return best;
}

// 6. Empty: the first maximum over the planes' first maxima.
int64_t imprint_empty_place(const ImprintArrays& a, const ImprintRobotRows& r) {
  const float* plane_max = r.row + r.layout.plane_max();
  const int32_t* plane_arg = a.plane_argmax + r.b * a.plane_argmax_stride;
  int64_t empty_x = 0;
  for (int64_t x = 1; x < r.R; ++x) {
    if (plane_max[x] > plane_max[empty_x]) empty_x = x;
  }
  return plane_arg[empty_x];
}

// 8. Remember the pattern and its place (slot count mod 100; the host advances the count).
void imprint_remember(const ImprintArrays& a, const ImprintRobotRows& r, int64_t count, int64_t lx,
                      int64_t ly, int64_t lz) {
  const int64_t slot = count % imprint::kMapCapacity;
  for (int64_t j = 0; j < r.S; ++j) r.map[slot * r.S + j] = r.p[j];
  r.map_loc[slot * 3 + 0] = lx;
  r.map_loc[slot * 3 + 1] = ly;
  r.map_loc[slot * 3 + 2] = lz;
}

// 9. The blob of strength s around (lx, ly, lz) on all 64 channels.
void imprint_blob(const ImprintArrays& a, const ImprintRobotRows& r, float s, int64_t lx,
                  int64_t ly, int64_t lz) {
  const int64_t R = r.R, V = r.V;
  float* F = a.field + r.b * 64 * V;
  for (int i = 0; i < imprint::kBlobVoxels; ++i) {
    int dx = 0, dy = 0, dz = 0;
    imprint::blob_offset(i, dx, dy, dz);
    const int64_t x = lx + dx, y = ly + dy, z = lz + dz;
    if (x < 0 || x >= R || y < 0 || y >= R || z < 0 || z >= R) continue;
    const float add = philox::mul_rn(s, a.blob_weight[i]);
    const int64_t v = (x * R + y) * R + z;
    for (int64_t c = 0; c < 64; ++c) F[c * V + v] += add;
  }
}

// Everything of step 4 after the maps, for one robot with input.
void imprint_robot(const ImprintArrays& a, int64_t b) {
  const ImprintRobotRows r(a, b);
  const float s = imprint_strength_of(a, b);
  const float p_norm = imprint_unit_pattern(a, r);
  const int64_t count = r.facts[kFactMapCount];
  const int64_t best_slot = imprint_existing_slot(a, r, p_norm, count);
  // A remembered place wins: the resonant map is not needed then.
  const ImprintResonance resonance =
      best_slot < 0 ? imprint_resonant_place(a, r) : ImprintResonance{};
  const bool accepted = resonance.best_sm > imprint::kResonantAccept;
  const int64_t empty_loc = imprint_empty_place(a, r);

  // 7. Choose; mark a place taken by the empty strategy.
  const int64_t R = r.R;
  int64_t loc = 0;
  if (best_slot >= 0) {
    const int64_t* l = r.map_loc + best_slot * 3;
    loc = (l[0] * R + l[1]) * R + l[2];
  } else if (accepted) {
    loc = resonance.loc;
  } else {
    loc = empty_loc;
    a.occ[b * r.V + loc] = 1.0f;
  }
  const int64_t lx = loc / (R * R), ly = (loc / R) % R, lz = loc % R;
  imprint_remember(a, r, count, lx, ly, lz);
  imprint_blob(a, r, s, lx, ly, lz);
}

}  // namespace

void run(const ImprintArrays& a) {
  const int64_t B = a.batch, R = a.resolution;
  if (B == 0) return;
  at::parallel_for(0, B * R, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      if (has_input(a, t / R)) plane_maps(a, t / R, t % R);
    }
  });
  at::parallel_for(0, B, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      if (has_input(a, b)) {
        imprint_robot(a, b);
      } else {
        a.strength[b * a.strength_stride] = 0.0f;
      }
    }
  });
}

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
