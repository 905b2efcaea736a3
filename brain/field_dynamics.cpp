#include "brain/field_dynamics.h"

#include <stdexcept>

#include <ATen/core/dispatch/Dispatcher.h>
#include <fmt/format.h>

#include "brain/field_step_script.h"
#include "brain/ops/philox.h"
#include "brain/portable_math.h"

namespace fieldbrain {
namespace {

using torch::indexing::Slice;

// Depthwise [1,-2,1] second difference along one spatial axis (axis 0..2 = x, y, z).
torch::Tensor laplacian_kernel(int64_t axis, const torch::TensorOptions& opts) {
  std::vector<int64_t> shape{48, 1, 1, 1, 1};
  shape[2 + axis] = 3;
  auto k = torch::zeros(shape, opts);
  auto flat = k.view({48, 3});
  flat.index_put_({Slice(), 0}, 1.0);
  flat.index_put_({Slice(), 1}, -2.0);
  flat.index_put_({Slice(), 2}, 1.0);
  return k;
}

// Depthwise 3x3x3 kernel of 0.1 with a zero centre: 0.1 x the sum of the 26 neighbours.
torch::Tensor coupling_kernel(const torch::TensorOptions& opts) {
  auto k = torch::full({48, 1, 3, 3, 3}, 0.1, opts);
  k.index_put_({Slice(), 0, 1, 1, 1}, 0.0);
  return k;
}

void check_step_inputs(const torch::Tensor& field, const torch::Tensor& noise,
                       const torch::Tensor& wave, const torch::Tensor& ef,
                       const torch::Tensor& scalars) {
  if (field.dim() != 5 || field.size(1) != 64) {
    throw std::invalid_argument("field_step: field must be [B,64,R,R,R]");
  }
  const int64_t B = field.size(0), R = field.size(2);
  if (noise.sizes() != torch::IntArrayRef({B, 48, R, R, R}) ||
      wave.sizes() != torch::IntArrayRef({B, R, R, R}) ||
      ef.sizes() != torch::IntArrayRef({B, R, R, R}) ||
      scalars.sizes() != torch::IntArrayRef({B, kStepScalarCount})) {
    throw std::invalid_argument("field_step: noise/wave/ef/scalars shapes do not match the field");
  }
}

}  // namespace

torch::Tensor field_step_reference(const torch::Tensor& field, const torch::Tensor& noise,
                                   const torch::Tensor& wave, const torch::Tensor& ef,
                                   const torch::Tensor& scalars) {
  check_step_inputs(field, noise, wave, ef, scalars);
  const int64_t B = field.size(0), R = field.size(2);
  const auto opts = field.options();
  auto per_robot = [&](int64_t col) { return scalars.select(1, col).reshape({B, 1, 1, 1, 1}); };
  const auto decay = per_robot(kStepDecay);
  const auto drive = per_robot(kStepDrive);
  const auto explore = per_robot(kStepExplore);
  const auto sigma = per_robot(kStepSigma);
  const auto has_ef = scalars.select(1, kStepHasEf) > 0.5;

  const auto X = field.slice(1, 0, 48);
  const auto D = field.slice(1, 48, 64);
  const auto dec = torch::sigmoid(D.slice(1, 0, 4));
  const auto dif = torch::tanh(D.slice(1, 4, 8)) * 0.1;
  const auto cw = D.slice(1, 8, 12);
  const auto pl = torch::sigmoid(D.slice(1, 12, 16));
  const auto gmu = decay * 0.999;

  // 1. Differential decay: spatial channels c < 32 by f_{c mod 4}; the temporal block by the
  // mean factor, then the one-step temporal blend (computed from the decayed products).
  const auto f = dec * gmu;
  const auto Xs = (X.slice(1, 0, 32).reshape({B, 8, 4, R, R, R}) * f.unsqueeze(1))
                      .reshape({B, 32, R, R, R});
  const auto T = X.slice(1, 32, 48) * (dec.mean(1, true) * gmu);
  const auto T1 = torch::cat({T.slice(1, 0, 1) * 0.85,
                              T.slice(1, 1, 16) * 0.85 + T.slice(1, 0, 15) * 0.15},
                             1);
  const auto X1 = torch::cat({Xs, T1}, 1);

  // 2. Spontaneous activity.
  const auto X2 = X1 + (noise * 0.001 + wave.unsqueeze(1) * (2 * 0.0005)) * drive;

  // 3. Learned diffusion, zero padded, all three Laplacians from X2.
  const auto Lx = torch::conv3d(X2, laplacian_kernel(0, opts), {}, 1, {1, 0, 0}, 1, 48);
  const auto Ly = torch::conv3d(X2, laplacian_kernel(1, opts), {}, 1, {0, 1, 0}, 1, 48);
  const auto Lz = torch::conv3d(X2, laplacian_kernel(2, opts), {}, 1, {0, 0, 1}, 1, 48);
  const auto X3 = X2 + (Lx * dif.slice(1, 0, 1) + Ly * dif.slice(1, 1, 2) +
                        Lz * dif.slice(1, 2, 3));

  // 4. Coupling through the 26 neighbours.
  const auto Aq = torch::tanh(X3 * pl.slice(1, 0, 1));
  const auto N = torch::conv3d(Aq, coupling_kernel(opts), {}, 1, 1, 1, 48);
  const auto X4 = X3 + N * cw.mean(1, true) * pl.slice(1, 1, 2);

  // 5. Dynamics self-modification from per-voxel statistics over the 48 content channels.
  const auto absX4 = X4.abs();
  const auto E = absX4.mean(1, true);
  const auto V = X4.var(1, /*unbiased=*/true, /*keepdim=*/true);
  const auto Sp = (absX4 < 0.1).to(opts.dtype()).mean(1, true);
  auto U = torch::zeros({B, 16, R, R, R}, opts);
  U.slice(1, 0, 1).copy_(-E * sigma);
  U.slice(1, 4, 5).copy_(V * sigma);
  U.slice(1, 8, 9).copy_(Sp * 0.5 * sigma);
  U.slice(1, 12, 13).copy_((E * explore - 0.5) * 0.5 * sigma);
  auto D1 = D * 0.95 + U * 0.05;

  // Error-driven resource allocation (only robots with an error field).
  const auto absEf = ef.abs();
  const auto mE = (absEf / (absEf.amax({1, 2, 3}, true) + 1e-8)).unsqueeze(1);
  auto Mod = D1.clone();
  Mod.slice(1, 0, 4).copy_(D1.slice(1, 0, 4) * 0.9 + (1 - mE * 0.5) * 0.1);
  Mod.slice(1, 4, 8).copy_(D1.slice(1, 4, 8) * 0.9 + (mE * 0.2 - 0.1) * 0.1);
  Mod.slice(1, 12, 16).copy_(D1.slice(1, 12, 16) * 0.9 + torch::sigmoid(mE * 2 - 0.5) * 0.1);
  const auto wE = absEf.mean({1, 2, 3}).clamp_max(0.5).reshape({B, 1, 1, 1, 1});
  const auto blended = (1 - wE) * D1 + wE * Mod;
  D1 = torch::where(has_ef.reshape({B, 1, 1, 1, 1}), blended, D1);

  // 7. NaN repair, squash when the content leaves [-2, 2], clamp the dynamics.
  auto Fn = torch::cat({X4, D1}, 1);
  Fn = torch::where(torch::isnan(Fn), torch::zeros({}, opts), Fn);
  const auto Xn = Fn.slice(1, 0, 48);
  const auto squash = (Xn.abs().amax({1, 2, 3, 4}) > 2.0).reshape({B, 1, 1, 1, 1});
  Fn = torch::cat({torch::where(squash, torch::tanh(Xn), Xn),
                   Fn.slice(1, 48, 64).clamp(-5.0, 5.0)},
                  1);

  // 8. Global periodic diffusion, all three axes from the same Fn.
  torch::Tensor lap;
  for (int64_t axis = 2; axis <= 4; ++axis) {
    auto term = (torch::roll(Fn, 1, axis) + torch::roll(Fn, -1, axis) - Fn * 2) / 2;
    lap = lap.defined() ? lap + term : term;
  }
  return Fn + lap * 0.05;
}

FieldDynamicsState::FieldDynamicsState(FieldDynamicsOptions options_) : options(std::move(options_)) {
  const int64_t B = options.batch(), R = options.resolution();
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(options.device());
  wave_vectors = register_buffer("wave_vectors", torch::zeros({B, 5, 3}, opts));
  wave_mask = register_buffer("wave_mask", torch::zeros({B, 5}, opts));
  wave = register_buffer("wave", torch::zeros({B, R, R, R}, opts));
}

FieldDynamicsImpl::FieldDynamicsImpl(FieldDynamicsOptions options_)
    : FieldDynamicsState(std::move(options_)) {
  const int64_t R = options.resolution();
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(options.device());
  auto r = torch::arange(R, opts);
  auto grid = torch::meshgrid({r, r, r}, "ij");
  coords = torch::stack({grid[0], grid[1], grid[2]}).contiguous();
  switch (options.field_step()) {
    case FieldStepImpl::Aten:
      break;
    case FieldStepImpl::Fused:
      if (!c10::Dispatcher::singleton().findSchema({"fieldbrain::field_step", ""}).has_value()) {
        throw std::invalid_argument(
            "brain config: field_step = \"fast\" but the fieldbrain::field_step operator is not "
            "registered (link the fieldbrain ops library)");
      }
      break;
    case FieldStepImpl::Script:
    case FieldStepImpl::ScriptFile: {
      const bool builtin = options.field_step() == FieldStepImpl::Script;
      // load() names the problem when the path is not an exported step.
      try {
        script_ = std::make_shared<ScriptedFieldStep>(builtin ? ScriptedFieldStep::builtin()
                                                              : ScriptedFieldStep::load(options.script_path()));
      } catch (const std::exception& e) {
        throw std::invalid_argument(fmt::format("brain config: field_step = \"{}\": {}",
                                                builtin ? "script" : options.script_path(), e.what()));
      }
      break;
    }
  }
}

void FieldDynamicsState::init_robot(int64_t b, uint64_t seed) {
  // n_waves = 3 + (word 0 of block 0 of the wave-count stream) mod 3; then the first
  // 3 n_waves normals of the wave-vector stream, row by row.
  const auto count = philox::block_words(seed, 0, philox::kStreamWaveCount, 0);
  const int64_t n_waves = 3 + static_cast<int64_t>(count.w[0] % 3u);
  auto wv = torch::empty({n_waves, 3}, torch::kFloat);
  float* v = wv.data_ptr<float>();
  for (int64_t i = 0; i < 3 * n_waves; ++i) {
    v[i] = philox::normal(seed, 0, philox::kStreamWaveVectors, static_cast<uint64_t>(i));
  }
  wv = portable::unit_rows(wv, 1);
  wave_vectors[b].zero_();
  wave_vectors[b].slice(0, 0, n_waves).copy_(wv.to(wave_vectors.device()));
  wave_mask[b].zero_();
  wave_mask[b].slice(0, 0, n_waves).fill_(1.0);
}

const torch::Tensor& FieldDynamicsImpl::compute_wave(const torch::Tensor& phi) {
  const int64_t B = options.batch();
  const auto& c = coords;
  auto comp = [&](int64_t i) { return wave_vectors.select(2, i).reshape({B, 5, 1, 1, 1}); };
  const auto dot = comp(0) * c[0] + comp(1) * c[1] + comp(2) * c[2];
  const auto s = portable::sin(dot / 3 + phi.reshape({B, 1, 1, 1, 1}));
  wave.copy_((s * wave_mask.reshape({B, 5, 1, 1, 1})).sum(1));
  return wave;
}

torch::Tensor FieldDynamicsImpl::step(const torch::Tensor& field, const torch::Tensor& noise,
                                      const torch::Tensor& wave_, const torch::Tensor& ef,
                                      const torch::Tensor& scalars) {
  if (options.field_step() == FieldStepImpl::Fused) {
    static const auto op = c10::Dispatcher::singleton()
                               .findSchemaOrThrow("fieldbrain::field_step", "")
                               .typed<at::Tensor(const at::Tensor&, const at::Tensor&,
                                                 const at::Tensor&, const at::Tensor&,
                                                 const at::Tensor&)>();
    return op.call(field, noise, wave_, ef, scalars);
  }
  if (script_) return (*script_)(field, noise, wave_, ef, scalars);
  return field_step_reference(field, noise, wave_, ef, scalars);
}

}  // namespace fieldbrain
