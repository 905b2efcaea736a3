// FieldStrategicPlanner._generate_tension_targeted_pattern: a candidate pattern [R,R,R,16]
// shaped for the field's dominant tension. Every draw is the original's call, shape and order on
// `gen`; the per-voxel arithmetic the original does with 0-d tensors is done here in float32 on
// the host where torch's kernels round exactly so (a float32 product or quotient with a Python
// float cast to float32 first), and with the same ATen call where they may not (torch.dot,
// torch.sin: their bits depend on the build, so they are called per voxel as the original
// calls them).
#include <ATen/ATen.h>

#include <cmath>
#include <string>
#include <utility>

#include "brain/legacy/strategic_planner.h"

namespace fieldbrain::legacy {

namespace {

constexpr double kPi = 3.141592653589793;  // np.pi

int64_t draw_int(int64_t high, at::Generator& gen) {  // torch.randint(0, high, (1,)).item()
  return at::randint(0, high, {1}, gen, at::kLong).item<int64_t>();
}
double draw_normal(at::Generator& gen) {  // torch.randn(1).item()
  return at::randn({1}, gen, at::kFloat).item<double>();
}

// direction = torch.randn(3); direction / (torch.norm(direction) + 1e-8)
torch::Tensor random_direction(at::Generator& gen) {
  torch::Tensor d = at::randn({3}, gen, at::kFloat);
#if TORCH_VERSION_MAJOR >= 2
  torch::Tensor norm = at::linalg_vector_norm(d, 2);  // torch.norm's "fro" default in 2.x
#else
  torch::Tensor norm = at::frobenius_norm(d, {}, false);  // ... and in 1.13
#endif
  return d / (norm + 1e-8);
}

// Walks every voxel in the original's x, y, z order with torch.dot(pos, direction) as a float.
template <class F>
void for_each_projection(int64_t R, const torch::Tensor& direction, F&& f) {
  torch::Tensor pos = torch::empty({3}, torch::kFloat32);
  float* p = pos.data_ptr<float>();
  for (int64_t x = 0; x < R; ++x)
    for (int64_t y = 0; y < R; ++y)
      for (int64_t z = 0; z < R; ++z) {
        p[0] = static_cast<float>(x);
        p[1] = static_cast<float>(y);
        p[2] = static_cast<float>(z);
        f(x, y, z, at::dot(pos, direction).item<float>());
      }
}

struct PatternView {
  float* data;
  int64_t R;
  float* at(int64_t x, int64_t y, int64_t z) const { return data + ((x * R + y) * R + z) * 16; }
  bool inside(int64_t x, int64_t y, int64_t z) const {
    return x >= 0 && x < R && y >= 0 && y < R && z >= 0 && z < R;
  }
};

void information_pattern(const PatternView& v, double tension, at::Generator& gen) {
  const auto strength = static_cast<float>(tension), r = static_cast<float>(v.R);
  for (int i = 0; i < 3; ++i) {
    torch::Tensor direction = random_direction(gen);
    // pattern[x, y, z, i*4:(i+1)*4] = projection * strength / R
    for_each_projection(v.R, direction, [&](int64_t x, int64_t y, int64_t z, float proj) {
      const float value = proj * strength / r;
      float* c = v.at(x, y, z) + i * 4;
      for (int k = 0; k < 4; ++k) c[k] = value;
    });
  }
}

void learning_pattern(const PatternView& v, double tension, at::Generator& gen) {
  const auto peaks = static_cast<int64_t>(10 * tension);  // int() truncates
  for (int64_t n = 0; n < peaks; ++n) {
    const int64_t px = draw_int(v.R, gen), py = draw_int(v.R, gen), pz = draw_int(v.R, gen);
    const int64_t feature = draw_int(12, gen);
    v.at(px, py, pz)[feature] = static_cast<float>(draw_normal(gen) * 2.0);
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz) {
          if (std::abs(dx) + std::abs(dy) + std::abs(dz) != 1) continue;
          const int64_t x = px + dx, y = py + dy, z = pz + dz;
          if (!v.inside(x, y, z)) continue;
          float* c = v.at(x, y, z) + feature;
          *c = *c + static_cast<float>(draw_normal(gen) * 0.5);
        }
  }
}

void confidence_pattern(const PatternView& v, double tension, at::Generator& gen) {
  const auto t = static_cast<float>(tension), r = static_cast<float>(v.R);
  torch::Tensor arg = torch::empty({}, torch::kFloat32);
  float* a = arg.data_ptr<float>();
  for (int i = 0; i < 3; ++i) {
    torch::Tensor direction = random_direction(gen);
    for_each_projection(v.R, direction, [&](int64_t x, int64_t y, int64_t z, float proj) {
      *a = proj * 0.5f;  // spiral = torch.sin(projection * 0.5) * 0.3
      const float spiral = at::sin(arg).item<float>() * static_cast<float>(0.3);
      const float value = (proj / r + spiral) * t;
      float* c = v.at(x, y, z) + i * 5;
      for (int k = 0; k < 5; ++k) c[k] = value;
    });
  }
}

void prediction_pattern(const PatternView& v, double tension, at::Generator& gen) {
  const double frequency = 0.2 + tension * 0.3;
  const auto t = static_cast<float>(tension);
  for (int axis = 0; axis < 3; ++axis) {
    torch::Tensor phase = at::rand({1}, gen, at::kFloat) * 2 * kPi;
    // wave = torch.sin(pos_val * 2 * np.pi * frequency + phase), pos_val = [x, y, z][axis] / R:
    // one value per coordinate along the axis
    std::vector<float> wave(static_cast<std::size_t>(v.R));
    for (int64_t k = 0; k < v.R; ++k) {
      const double pos_val = static_cast<double>(k) / static_cast<double>(v.R);
      wave[static_cast<std::size_t>(k)] =
          at::sin(pos_val * 2 * kPi * frequency + phase).item<float>() * t;
    }
    for (int64_t x = 0; x < v.R; ++x)
      for (int64_t y = 0; y < v.R; ++y)
        for (int64_t z = 0; z < v.R; ++z) {
          const int64_t coord[3] = {x, y, z};
          const float value = wave[static_cast<std::size_t>(coord[axis])];
          float* c = v.at(x, y, z) + 8 + axis * 2;
          c[0] = value;
          c[1] = value;
        }
  }
}

void novelty_pattern(const PatternView& v, torch::Tensor& pattern, double tension,
                     at::Generator& gen) {
  torch::Tensor base = at::randn(pattern.sizes(), gen, pattern.options()) * 0.3;
  for (int i = 0; i < 4; ++i) {
    const int64_t scale = int64_t{1} << i;
    for (int64_t x = 0; x < v.R; x += scale)
      for (int64_t y = 0; y < v.R; y += scale)
        for (int64_t z = 0; z < v.R; z += scale) {
          const auto block = static_cast<float>(draw_normal(gen) * tension * 0.5);
          const int64_t x1 = std::min(x + scale, v.R), y1 = std::min(y + scale, v.R),
                        z1 = std::min(z + scale, v.R);
          for (int64_t a = x; a < x1; ++a)
            for (int64_t b = y; b < y1; ++b)
              for (int64_t c = z; c < z1; ++c) {
                float* p = v.at(a, b, c) + i * 3;
                for (int k = 0; k < 3; ++k) p[k] = p[k] + block;
              }
        }
  }
  pattern.add_(base);
}

void monotony_pattern(const PatternView& v, double tension, at::Generator& gen) {
  for (int burst = 0; burst < 5; ++burst) {
    const int64_t channel = draw_int(12, gen);
    const int64_t cx = draw_int(v.R, gen), cy = draw_int(v.R, gen), cz = draw_int(v.R, gen);
    for (int dx = -3; dx <= 3; ++dx)
      for (int dy = -3; dy <= 3; ++dy)
        for (int dz = -3; dz <= 3; ++dz) {
          const int64_t x = cx + dx, y = cy + dy, z = cz + dz;
          if (!v.inside(x, y, z)) continue;
          const int distance = std::abs(dx) + std::abs(dy) + std::abs(dz);
          const auto intensity = static_cast<float>((1.0 - distance / 9.0) * tension);
          torch::Tensor noise = at::randn({4}, gen, at::kFloat);
          const float* n = noise.data_ptr<float>();
          float* c = v.at(x, y, z) + channel;
          for (int k = 0; k < 4; ++k) c[k] = c[k] + n[k] * intensity;
        }
  }
}

}  // namespace

torch::Tensor generate_tension_targeted_pattern(int64_t R, const FieldTensions& t,
                                                at::Generator& gen) {
  torch::Tensor pattern = torch::zeros({R, R, R, 16}, torch::kFloat32);
  const PatternView v{pattern.data_ptr<float>(), R};
  // max(tensions.items(), key=...): the first of the largest, 'total' never
  const std::pair<const char*, double> order[] = {
      {"information", t.information}, {"learning", t.learning},     {"confidence", t.confidence},
      {"prediction", t.prediction},   {"novelty", t.novelty},       {"monotony", t.monotony}};
  std::string dominant = order[0].first;
  double best = order[0].second;
  for (const auto& [name, value] : order)
    if (value > best) {
      best = value;
      dominant = name;
    }
  if (dominant == "information")
    information_pattern(v, t.information, gen);
  else if (dominant == "learning")
    learning_pattern(v, t.learning, gen);
  else if (dominant == "confidence")
    confidence_pattern(v, t.confidence, gen);
  else if (dominant == "prediction")
    prediction_pattern(v, t.prediction, gen);
  else if (dominant == "novelty")
    novelty_pattern(v, pattern, t.novelty, gen);
  else
    monotony_pattern(v, t.monotony, gen);
  pattern = at::tanh(pattern);
  pattern.add_(at::randn(pattern.sizes(), gen, pattern.options()) * 0.05);
  return pattern;
}

}  // namespace fieldbrain::legacy
