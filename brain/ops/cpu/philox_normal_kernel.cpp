// CPU kernel of fieldbrain::philox_normal_out (brain/ops/field_step.h): the vectorised fill of
// the chosen instruction set (cpu/philox_fill.h), robot by robot, in pieces spread over
// at::parallel_for. Allocates nothing.
#include <ATen/Parallel.h>

#include <algorithm>

#include "brain/ops/cpu/field_step_passes.h"
#include "brain/ops/cpu/kernels.h"

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace {

// Elements per parallel task (a multiple of 4: tasks start on Philox block boundaries).
constexpr int64_t kPiece = 16384;

}  // namespace

void run(const PhiloxNormalArgs& args) {
  const int64_t B = args.batch, n = args.per_robot;
  if (B == 0 || n == 0) return;
  const int64_t* k = args.key;
  const uint32_t stream = args.stream;
  const int64_t pieces = (n + kPiece - 1) / kPiece;
  float* dst = args.out;
  const FillNormalsFn fill = chosen_passes().fill_normals;
  at::parallel_for(0, B * pieces, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / pieces, start = (t % pieces) * kPiece;
      fill(static_cast<uint64_t>(k[2 * b]), static_cast<uint64_t>(k[2 * b + 1]),
           stream, static_cast<uint64_t>(start),
           std::min(kPiece, n - start), dst + b * n + start);
    }
  });
}

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
