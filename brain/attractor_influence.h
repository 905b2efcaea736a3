// The reference cycle's attractor pull (docs/cycle.md step 7.9) on the CPU in one walk: bit for
// bit the floats of the ATen expression it replaces, which was, per robot and live slot j in
// slot order (F the robot's field, P_j the slot's stored field, w_j = s_j * valence_j * 0.01):
//
//   cos_j = float(cosine_similarity(double(F), double(P_j), eps 1e-8))
//   gate_j = (1 + cos_j) / 2 if valence_j > 0, else (1 - cos_j) / 2          (float)
//   inf_j = (P_j - F) * w_j * gate_j                                           (float)
//   total = inf_0 + inf_1 + ...;  F += total                                   (float)
//
// That expression made a float64 copy of the field, four full-field temporaries per slot and
// three passes over each slot for its cosine; the walk reads the field and each slot three
// times (two sums, one move) and makes nothing. test/brain/attractor_influence_test.cpp holds it
// against the expression, bit for bit.
#pragma once

#include <cstdint>
#include <vector>

namespace fieldbrain {

// One pulling slot of a robot, as the host decided it (step 7.9's ageing).
struct AttractorPull {
  const float* pattern;  // the slot's stored field, channels * voxels floats
  double weight;         // s * valence * 0.01 in double; rounded to float as ATen rounds a scalar
  bool attract;          // valence > 0: gate (1 + cos) / 2, else (1 - cos) / 2
};

// field (one robot: channels * voxels contiguous floats) += the pull of `pulls`, in their order.
// Parallel over channels (at::parallel_for); the result does not depend on the thread count.
void attractor_influence(float* field, int64_t channels, int64_t voxels,
                         const std::vector<AttractorPull>& pulls);

}  // namespace fieldbrain
