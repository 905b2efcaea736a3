#include "brain/legacy/field_stencils.h"

#include <cmath>
#include <vector>

namespace fieldbrain::legacy {

namespace {

#if defined(__x86_64__) && defined(__GNUC__)
#define FIELDBRAIN_LEGACY_FMA __attribute__((target("avx2,fma")))
#else
#define FIELDBRAIN_LEGACY_FMA
#endif

// One depthwise 3x3x3 FMA chain per output element (the taps with a non-zero weight only: an
// FMA with a zero weight or a zero-padded input adds +0 and changes no value).
struct Tap {
  int dx, dy, dz;
  float w;
};

FIELDBRAIN_LEGACY_FMA void conv_taps(const float* in, float* out, int64_t R0, int64_t R1,
                                     int64_t R2, int64_t C, const std::vector<Tap>& taps) {
  for (int64_t x = 0; x < R0; ++x)
    for (int64_t y = 0; y < R1; ++y)
      for (int64_t z = 0; z < R2; ++z) {
        float* o = out + ((x * R1 + y) * R2 + z) * C;
        for (int64_t c = 0; c < C; ++c) o[c] = 0.0f;
        for (const Tap& t : taps) {
          const int64_t nx = x + t.dx, ny = y + t.dy, nz = z + t.dz;
          if (nx < 0 || nx >= R0 || ny < 0 || ny >= R1 || nz < 0 || nz >= R2) continue;
          const float* i = in + ((nx * R1 + ny) * R2 + nz) * C;
          const float w = t.w;
          for (int64_t c = 0; c < C; ++c) o[c] = __builtin_fmaf(w, i[c], o[c]);
        }
      }
}

}  // namespace

torch::Tensor learned_diffusion(const torch::Tensor& content_in, const torch::Tensor& diffusion) {
  torch::Tensor content = content_in.contiguous();
  const int64_t R0 = content.size(0), R1 = content.size(1), R2 = content.size(2),
                C = content.size(3);
  torch::Tensor out = content.clone();
  torch::Tensor lap = torch::empty_like(content);
  const std::vector<std::vector<Tap>> axes = {
      {{-1, 0, 0, 1.0f}, {0, 0, 0, -2.0f}, {1, 0, 0, 1.0f}},
      {{0, -1, 0, 1.0f}, {0, 0, 0, -2.0f}, {0, 1, 0, 1.0f}},
      {{0, 0, -1, 1.0f}, {0, 0, 0, -2.0f}, {0, 0, 1, 1.0f}}};
  float* o = out.data_ptr<float>();
  for (int a = 0; a < 3; ++a) {
    conv_taps(content.data_ptr<float>(), lap.data_ptr<float>(), R0, R1, R2, C, axes[a]);
    torch::Tensor d = diffusion.select(3, a).contiguous();
    const float* dp = d.data_ptr<float>();
    const float* lp = lap.data_ptr<float>();
    const int64_t V = R0 * R1 * R2;
    for (int64_t v = 0; v < V; ++v) {
      const float s = dp[v];
      for (int64_t c = 0; c < C; ++c) {
        const float term = lp[v * C + c] * s;  // laplacian * diff_strength, rounded
        o[v * C + c] = o[v * C + c] + term;    // new_content += ..., rounded
      }
    }
  }
  return out;
}

torch::Tensor neighbour_sum(const torch::Tensor& activation_in, float weight) {
  torch::Tensor activation = activation_in.contiguous();
  torch::Tensor out = torch::empty_like(activation);
  std::vector<Tap> taps;
  for (int dx = -1; dx <= 1; ++dx)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dz = -1; dz <= 1; ++dz)
        if (dx != 0 || dy != 0 || dz != 0) taps.push_back({dx, dy, dz, weight});
  conv_taps(activation.data_ptr<float>(), out.data_ptr<float>(), activation.size(0),
            activation.size(1), activation.size(2), activation.size(3), taps);
  return out;
}

torch::Tensor periodic_diffusion(const torch::Tensor& field, double rate) {
  torch::Tensor out = torch::empty_like(field, at::MemoryFormat::Contiguous);
  periodic_diffusion_into(field, out, rate);
  return out;
}

FIELDBRAIN_LEGACY_FMA void periodic_diffusion_into(const torch::Tensor& field_in,
                                              torch::Tensor& out, double rate_d) {
  torch::Tensor field = field_in.contiguous();
  const int64_t R0 = field.size(0), R1 = field.size(1), R2 = field.size(2), C = field.size(3);
  const float* f = field.data_ptr<float>();
  float* o = out.data_ptr<float>();
  const auto rate = static_cast<float>(rate_d);
  for (int64_t x = 0; x < R0; ++x)
    for (int64_t y = 0; y < R1; ++y)
      for (int64_t z = 0; z < R2; ++z) {
        const int64_t v = ((x * R1 + y) * R2 + z) * C;
        // roll(+1) reads index i-1, roll(-1) reads i+1, periodically
        const float* xm = f + ((((x + R0 - 1) % R0) * R1 + y) * R2 + z) * C;
        const float* xp = f + ((((x + 1) % R0) * R1 + y) * R2 + z) * C;
        const float* ym = f + ((x * R1 + (y + R1 - 1) % R1) * R2 + z) * C;
        const float* yp = f + ((x * R1 + (y + 1) % R1) * R2 + z) * C;
        const float* zm = f + ((x * R1 + y) * R2 + (z + R2 - 1) % R2) * C;
        const float* zp = f + ((x * R1 + y) * R2 + (z + 1) % R2) * C;
        const float* c0 = f + v;
        for (int64_t c = 0; c < C; ++c) {
          const float twice = 2.0f * c0[c];
          float r = c0[c];
          // result = result + rate * ((fwd + back - 2 * field) / 2), axis by axis
          r = r + rate * (((xm[c] + xp[c]) - twice) / 2.0f);
          r = r + rate * (((ym[c] + yp[c]) - twice) / 2.0f);
          r = r + rate * (((zm[c] + zp[c]) - twice) / 2.0f);
          o[v + c] = r;
        }
      }
}

}  // namespace fieldbrain::legacy
