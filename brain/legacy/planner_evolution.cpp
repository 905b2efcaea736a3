#include "brain/legacy/planner_evolution.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <mutex>

namespace fieldbrain::legacy {

namespace {
constexpr double kPatternDecay = 0.97;  // pattern_decay_rate
constexpr double kFieldDecay = 0.995;   // field_decay_rate

torch::Tensor pattern_channels(const torch::Tensor& t) { return t.slice(3, 32, 48); }
}  // namespace

torch::Tensor planner_diffusion_kernel() {
  torch::Tensor k = torch::zeros({1, 1, 3, 3, 3}, torch::kFloat32);
  auto a = k.accessor<float, 5>();
  a[0][0][1][1][1] = -6.0f;
  a[0][0][0][1][1] = a[0][0][2][1][1] = a[0][0][1][0][1] = 1.0f;
  a[0][0][1][2][1] = a[0][0][1][1][0] = a[0][0][1][1][2] = 1.0f;
  return k * 0.05;
}

torch::Tensor planner_evolve_aten(const torch::Tensor& field, const torch::Tensor& pattern,
                                  const torch::Tensor& kernel, at::Generator& gen) {
  torch::Tensor evolved = field * kFieldDecay;
  for (int64_t c = 0; c < field.size(3); ++c) {
    if (c >= 32 && c < 48) continue;  // the pattern channels do not diffuse
    torch::Tensor channel = field.select(3, c).unsqueeze(0).unsqueeze(0);
    if (channel.size(2) < 3) continue;
    torch::Tensor diffused = at::conv3d(channel, kernel, {}, {1, 1, 1}, {1, 1, 1});
    evolved.select(3, c).add_(diffused.squeeze() * 0.1);
  }
  pattern_channels(evolved)
      .copy_(pattern_channels(field) * kPatternDecay + pattern * (1 - kPatternDecay) * 0.1);
  torch::Tensor pattern_energy = pattern_channels(field).mean(-1, true);
  torch::Tensor gradient_influence = at::tanh(pattern_energy) * 0.05;
  evolved.slice(3, 0, 32).add_(gradient_influence.expand({-1, -1, -1, 32}));
  evolved = at::tanh(evolved * 1.02);
  evolved.add_(at::randn(evolved.sizes(), gen, evolved.options()) * 0.01);
  return evolved;
}

torch::Tensor planner_evolve_fused(const torch::Tensor& field_in, const torch::Tensor& pattern_in,
                                   const torch::Tensor& kernel, at::Generator& gen) {
  const torch::Tensor field = field_in.contiguous(), pattern = pattern_in.contiguous();
  const int64_t R0 = field.size(0), R1 = field.size(1), R2 = field.size(2), C = field.size(3);
  // the pattern's energy and its pull on the content: ATen's reduction and tanh, as the original
  const torch::Tensor influence =
      (at::tanh(pattern_channels(field).mean(-1, true)) * 0.05).contiguous();
  const auto k = kernel.accessor<float, 5>();
  const float w_centre = k[0][0][1][1][1], w_side = k[0][0][0][1][1];
  const auto decay = static_cast<float>(kFieldDecay), keep = static_cast<float>(kPatternDecay),
             refresh = static_cast<float>(1 - kPatternDecay), gentle = static_cast<float>(0.1),
             rate = static_cast<float>(0.1);
  torch::Tensor out = torch::empty_like(field);
  const float* f = field.data_ptr<float>();
  const float* p = pattern.data_ptr<float>();
  const float* g = influence.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const int64_t sx = R1 * R2 * C, sy = R2 * C, sz = C;
  for (int64_t x = 0; x < R0; ++x)
    for (int64_t y = 0; y < R1; ++y)
      for (int64_t z = 0; z < R2; ++z) {
        const int64_t v = (x * R1 + y) * R2 + z;
        const float* fv = f + v * C;
        float* ov = o + v * C;
        for (int64_t c = 0; c < C; ++c) {
          if (c >= 32 && c < 48) {
            const float fresh = p[v * 16 + (c - 32)] * refresh * gentle;
            ov[c] = fv[c] * keep + fresh;
            continue;
          }
          // conv3d's sum over the non-zero taps in (kx, ky, kz) order, each product rounded
          float d = 0.0f;
          if (x > 0) d = d + w_side * fv[c - sx];
          if (y > 0) d = d + w_side * fv[c - sy];
          if (z > 0) d = d + w_side * fv[c - sz];
          d = d + w_centre * fv[c];
          if (z + 1 < R2) d = d + w_side * fv[c + sz];
          if (y + 1 < R1) d = d + w_side * fv[c + sy];
          if (x + 1 < R0) d = d + w_side * fv[c + sx];
          float e = fv[c] * decay;
          e = e + d * rate;
          if (c < 32) e = e + g[v];
          ov[c] = e;
        }
      }
  out.mul_(1.02);
  at::tanh_(out);
  out.add_(at::randn(out.sizes(), gen, out.options()) * 0.01);
  return out;
}

bool planner_fused_step_is_exact() {
  static std::once_flag once;
  static bool exact = false;
  std::call_once(once, [] {
    const torch::Tensor kernel = planner_diffusion_kernel();
    at::Generator probe = at::make_generator<at::CPUGeneratorImpl>(20251128);
    const torch::Tensor field = at::randn({8, 8, 8, 64}, probe, torch::kFloat32) * 0.4;
    const torch::Tensor pattern = at::randn({8, 8, 8, 16}, probe, torch::kFloat32) * 0.5;
    at::Generator a = probe.clone(), b = probe.clone();
    exact = torch::equal(planner_evolve_aten(field, pattern, kernel, a),
                         planner_evolve_fused(field, pattern, kernel, b));
  });
  return exact;
}

}  // namespace fieldbrain::legacy
