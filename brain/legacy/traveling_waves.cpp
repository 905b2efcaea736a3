#include "brain/legacy/traveling_waves.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cstring>
#include <vector>

namespace fieldbrain::legacy {

torch::Tensor traveling_waves_aten(const torch::Tensor& wave_vectors, int64_t R,
                                   double phase_offset, double amplitude) {
  torch::Tensor waves = torch::zeros({R, R, R}, torch::kFloat32);
  std::vector<torch::Tensor> coords;
  for (int i = 0; i < 3; ++i) {
    std::vector<int64_t> view(3, 1);
    view[static_cast<std::size_t>(i)] = -1;
    coords.push_back(torch::arange(R, torch::kFloat32).view(view));
  }
  for (int64_t w = 0; w < wave_vectors.size(0); ++w) {
    torch::Tensor wave_vec = wave_vectors[w];
    torch::Tensor phase = (wave_vec[0] * coords[0] / 3.0) + phase_offset;
    for (int i = 1; i < 3; ++i) phase = phase + wave_vec[i] * coords[i] / 3.0;
    waves += torch::sin(phase) * amplitude;
  }
  waves *= 0.1;
  return waves.contiguous();
}

const torch::Tensor& TravelingWaves::loops(const torch::Tensor& wave_vectors, int64_t R,
                                           double phase_offset, double amplitude) {
  if (!waves_.defined() || waves_.size(0) != R) {
    waves_ = torch::empty({R, R, R}, torch::kFloat32);
    phase_ = torch::empty({R, R, R}, torch::kFloat32);
    sines_ = torch::empty({R, R, R}, torch::kFloat32);
  }
  const torch::Tensor wv = wave_vectors.contiguous();
  const float* vec = wv.data_ptr<float>();
  float* waves = waves_.data_ptr<float>();
  float* phase = phase_.data_ptr<float>();
  const float* sines = sines_.data_ptr<float>();
  const int64_t V = R * R * R;
  // the Python floats, rounded to float32 as ATen rounds a scalar operand
  const auto third = static_cast<float>(3.0), offset = static_cast<float>(phase_offset),
             amp = static_cast<float>(amplitude), tenth = static_cast<float>(0.1);
  std::memset(waves, 0, static_cast<std::size_t>(V) * sizeof(float));  // +0, as torch::zeros
  along_.resize(static_cast<std::size_t>(3 * R));
  for (int64_t w = 0; w < wv.size(0); ++w) {
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t c = 0; c < R; ++c)
        along_[static_cast<std::size_t>(i * R + c)] = vec[w * 3 + i] * static_cast<float>(c) / third;
    const float* ax = along_.data();
    const float* ay = ax + R;
    const float* az = ay + R;
    float* p = phase;
    for (int64_t x = 0; x < R; ++x) {
      const float px = ax[x] + offset;
      for (int64_t y = 0; y < R; ++y) {
        const float pxy = px + ay[y];
        for (int64_t z = 0; z < R; ++z) *p++ = pxy + az[z];
      }
    }
    at::sin_out(sines_, phase_);
    for (int64_t v = 0; v < V; ++v) waves[v] = waves[v] + sines[v] * amp;
  }
  for (int64_t v = 0; v < V; ++v) waves[v] = waves[v] * tenth;
  return waves_;
}

namespace {

bool same_wave_bits(const torch::Tensor& a, const torch::Tensor& b) {
  return a.sizes() == b.sizes() && a.is_contiguous() && b.is_contiguous() &&
         std::memcmp(a.data_ptr<float>(), b.data_ptr<float>(),
                     static_cast<std::size_t>(a.numel()) * sizeof(float)) == 0;
}

}  // namespace

// A few wave sets (random directions from a fixed-seed generator, the cycle's five waves and
// odd counts), sizes whose R^3 ends mid-vector and the cycle's, offsets small and large.
bool TravelingWaves::probe() {
  try {
    at::Generator gen = at::detail::createCPUGenerator(20261128);
    TravelingWaves waves;
    for (int64_t R : {1, 3, 5, 8, 11, 16, 17}) {
      for (int64_t n : {1, 5, 7}) {
        const torch::Tensor wv = at::randn({n, 3}, gen, torch::kFloat32) * 2.0;
        for (double offset : {0.0, 0.1, 0.30000000000000004, 12.7, 1234.5}) {
          const double amp = 0.001 * static_cast<double>(R) + 0.0003;
          if (!same_wave_bits(waves.loops(wv, R, offset, amp),
                              traveling_waves_aten(wv, R, offset, amp)))
            return false;
        }
      }
    }
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

bool TravelingWaves::exact_available() {
  static const bool available = probe();
  return available;
}

const torch::Tensor& TravelingWaves::generate(const torch::Tensor& wave_vectors, int64_t R,
                                              double phase_offset, double amplitude) {
  if (exact_available() && wave_vectors.scalar_type() == torch::kFloat32 &&
      wave_vectors.dim() == 2 && wave_vectors.size(1) == 3)
    return loops(wave_vectors, R, phase_offset, amplitude);
  waves_ = traveling_waves_aten(wave_vectors, R, phase_offset, amplitude);
  return waves_;
}

}  // namespace fieldbrain::legacy
