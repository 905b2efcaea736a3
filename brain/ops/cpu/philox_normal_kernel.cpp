// CPU kernel of fieldbrain::philox_normal_out (brain/ops/field_step.h): the vectorised fill of
// the chosen instruction set (cpu/philox_fill.h), robot by robot, in pieces spread over
// at::parallel_for. Allocates nothing.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <algorithm>

#include "brain/ops/cpu/field_step_passes.h"
#include "brain/ops/field_step_checks.h"

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace {

// Elements per parallel task (a multiple of 4: tasks start on Philox block boundaries).
constexpr int64_t kPiece = 16384;

at::Tensor& philox_normal_out_cpu(const at::Tensor& noise_key, int64_t stream, at::Tensor& out) {
  constexpr const char* kOp = "fieldbrain::philox_normal_out";
  TORCH_CHECK(out.defined() && out.dim() >= 1, kOp, ": out must be a tensor [B, ...]");
  TORCH_CHECK(out.scalar_type() == at::kFloat && out.is_contiguous() && out.device().is_cpu(), kOp,
              ": out must be a contiguous float32 CPU tensor");
  TORCH_CHECK(stream >= 0 && stream <= 0xFFFFFFFFLL, kOp, ": stream ", stream,
              " is not a 32-bit word");
  const int64_t B = out.size(0);
  check_noise_key(noise_key, B, out.device(), kOp);
  if (out.numel() == 0) return out;
  const at::Tensor key = noise_key.contiguous();
  const int64_t* k = key.data_ptr<int64_t>();
  const int64_t n = out.numel() / B;
  const int64_t pieces = (n + kPiece - 1) / kPiece;
  float* dst = out.data_ptr<float>();
  const FillNormalsFn fill = chosen_passes().fill_normals;
  at::parallel_for(0, B * pieces, 1, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / pieces, start = (t % pieces) * kPiece;
      fill(static_cast<uint64_t>(k[2 * b]), static_cast<uint64_t>(k[2 * b + 1]),
           static_cast<uint32_t>(stream), static_cast<uint64_t>(start),
           std::min(kPiece, n - start), dst + b * n + start);
    }
  });
  return out;
}

}  // namespace
}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CPU, m) {
  m.impl("philox_normal_out", TORCH_FN(fieldbrain::ops::cpu::philox_normal_out_cpu));
}
