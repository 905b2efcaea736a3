// The legacy profile's fused field loops (brain/legacy/field_loops.h) against the ATen
// expressions of the original they replace, bit for bit: the elementwise parts and the
// reductions (summed in ATen's order, brain/legacy/aten_sums.h).
#include "brain/legacy/field_loops.h"

#include <ATen/Parallel.h>

#include "brain/legacy/aten_sums.h"
#include "brain/legacy/exact_tanh.h"
#include "brain/legacy/field_stencils.h"
#include "brain/legacy/prediction_error_learning.h"
#include "test/support/catch.h"

namespace {

using torch::indexing::None;
using torch::indexing::Slice;
using namespace fieldbrain::legacy;

// A field as the brain holds it: content around 0, dynamics as initialize_field_dynamics
// draws them.
torch::Tensor test_field(int64_t R) {
  torch::Tensor f = torch::randn({R, R, R, 64}) * 0.3 + 0.05;
  f.index_put_({"...", Slice(48, 52)}, torch::randn({R, R, R, 4}) * 0.1 + 2.0);
  f.index_put_({"...", Slice(52, 60)}, torch::randn({R, R, R, 8}) * 0.05);
  f.index_put_({"...", Slice(60, 64)}, torch::randn({R, R, R, 4}) * 0.2);
  return f;
}

}  // namespace

TEST_CASE("The fused evolve loops equal the original's ATen chain of evolve_field", "[legacy]") {
  at::set_num_threads(1);
  torch::manual_seed(5);
  for (int64_t R : {6, 7, 16}) {  // 7: an odd line, its last voxel chained alone
    INFO("R " << R);
    const int64_t V = R * R * R;
    torch::Tensor field = test_field(R);
    torch::Tensor content = field.index({"...", Slice(0, 48)});
    torch::Tensor dynamics = field.index({"...", Slice(48, None)});
    torch::Tensor decay_rates = torch::sigmoid(dynamics.index({"...", Slice(0, 4)}));
    torch::Tensor diffusion = torch::tanh(dynamics.index({"...", Slice(4, 8)})) * 0.1;
    torch::Tensor coupling = dynamics.index({"...", Slice(8, 12)});
    torch::Tensor plasticity = torch::sigmoid(dynamics.index({"...", Slice(12, 16)}));
    const double gd = 0.9935, dm = 0.999, rate = 0.001, drive = 0.62, s = 0.0137, ex = 0.71;

    // _apply_differential_decay + the spontaneous activity
    torch::Tensor spatial = content.index({"...", Slice(0, 32)}).clone();
    for (int64_t k = 0; k < 4; ++k)
      spatial.index({"...", Slice(k, None, 4)}) *=
          decay_rates.index({"...", k}).unsqueeze(-1) * gd * dm;
    torch::Tensor temporal =
        content.index({"...", Slice(32, None)}) * (torch::mean(decay_rates, {-1}, true) * gd * dm);
    torch::Tensor momentum = torch::zeros_like(temporal);
    momentum.index_put_({"...", Slice(1, None)}, temporal.index({"...", Slice(None, -1)}) * 0.15);
    temporal = temporal * 0.85 + momentum;
    torch::Tensor noise = torch::randn({R, R, R, 48});
    torch::Tensor waves = torch::randn({R, R, R}) * 0.01;
    torch::Tensor expected = torch::cat({spatial, temporal}, -1);
    torch::Tensor decayed_only = expected.clone();
    torch::Tensor spontaneous = noise * rate + waves.unsqueeze(-1).expand({R, R, R, 48}) * 2.0;
    spontaneous *= drive;
    expected += spontaneous;
    torch::Tensor a = torch::empty({R, R, R, 48});
    decay_spontaneous(field.data_ptr<float>(), V, gd, dm, noise.data_ptr<float>(), rate,
                      waves.data_ptr<float>(), drive, a.data_ptr<float>());
    CHECK(torch::equal(a, expected));
    torch::Tensor a0 = torch::empty({R, R, R, 48});
    decay_spontaneous(field.data_ptr<float>(), V, gd, dm, nullptr, rate, nullptr, drive,
                      a0.data_ptr<float>());
    CHECK(torch::equal(a0, decayed_only));

    // _apply_learned_diffusion
    torch::Tensor diffused = learned_diffusion(expected, diffusion);
    torch::Tensor b = torch::empty({R, R, R, 48});
    torch::Tensor strengths = diffusion.contiguous();
    torch::Tensor act = torch::empty({R, R, R, 48});
    learned_diffusion_fused(a.data_ptr<float>(), strengths.data_ptr<float>(), R,
                            field.data_ptr<float>(), b.data_ptr<float>(), act.data_ptr<float>());
    CHECK(torch::equal(b, diffused));

    // _apply_coupling
    torch::Tensor activation = torch::tanh(diffused * plasticity.index({"...", 0}).unsqueeze(-1));
    act.tanh_();
    CHECK(torch::equal(act, activation));
    // the same walk with the tanh taken inside it (exact_tanh.h), where this ATen allows it
    if (exact_tanh_available()) {
      torch::Tensor b2 = torch::empty({R, R, R, 48}), act2 = torch::empty({R, R, R, 48});
      learned_diffusion_fused(a.data_ptr<float>(), strengths.data_ptr<float>(), R,
                              field.data_ptr<float>(), b2.data_ptr<float>(), act2.data_ptr<float>(),
                              true);
      CHECK(torch::equal(b2, diffused));
      CHECK(torch::equal(act2, activation));
    }
    torch::Tensor coupled = diffused + neighbour_sum(activation, static_cast<float>(0.1)) *
                                           torch::mean(coupling, {-1}, true) *
                                           plasticity.index({"...", 1}).unsqueeze(-1);

    // _evolve_dynamics (+ the error field's resource allocation), clamped
    torch::Tensor abs_c = torch::abs(coupled);
    torch::Tensor energy = torch::mean(abs_c, {-1}, true).squeeze(-1);
    torch::Tensor variance = torch::var(coupled, at::IntArrayRef{-1}, true, true).squeeze(-1);
    torch::Tensor sparsity = torch::mean((abs_c < 0.1).to(torch::kFloat32), {-1}, true).squeeze(-1);
    torch::Tensor update = torch::zeros({R, R, R, 16});
    update.index_put_({"...", 0}, -energy * s);
    update.index_put_({"...", 4}, variance * s);
    update.index_put_({"...", 8}, sparsity * s * 0.5);
    update.index_put_({"...", 12}, (energy * ex - 0.5) * s * 0.5);
    torch::Tensor base = dynamics * 0.95 + update * (1 - 0.95);
    // the original's mask: (|E| / (max|E| + 1e-8))[..., 0:4], a strided view
    torch::Tensor error_field = torch::randn({R, R, R, 64});
    torch::Tensor error_norm = torch::abs(error_field);
    error_norm = error_norm / (torch::max(error_norm) + 1e-8);
    torch::Tensor mask = error_norm.index({"...", Slice(0, 4)});
    const double w = 0.31;
    torch::Tensor steered =
        base * (1 - w) + PredictionErrorLearning::allocate_field_resources(mask, base) * w;
    torch::Tensor terms, scratch;
    PredictionErrorLearning::resource_terms(
        error_field, torch::max(torch::abs(error_field)).item<float>(), terms, scratch);
    for (bool with_error : {false, true}) {
      INFO("error field " << with_error);
      torch::Tensor out = torch::empty({R, R, R, 64});
      const EvolveTail tail =
          coupling_and_dynamics(b.data_ptr<float>(), act.data_ptr<float>(), field.data_ptr<float>(),
                                R, s, ex, with_error ? terms.data_ptr<float>() : nullptr,
                                with_error ? w : 0.0, out.data_ptr<float>());
      CHECK(torch::equal(out.index({"...", Slice(0, 48)}), coupled));
      torch::Tensor dyn = torch::clamp(with_error ? steered : base, -5.0, 5.0);
      CHECK(torch::equal(out.index({"...", Slice(48, None)}), dyn));
      CHECK(tail.max_abs_content == coupled.abs().max().item<float>());
      CHECK_FALSE(tail.has_nan);
    }
  }
}

TEST_CASE("The fused reductions equal the ATen means, variance and cosine bit for bit",
          "[legacy]") {
  at::set_num_threads(1);
  torch::manual_seed(6);
  const int64_t R = 12, V = R * R * R;
  torch::Tensor field = test_field(R);
  const float* f = field.data_ptr<float>();
  // compute_field_state's mean(|content|) and var(content)
  torch::Tensor content = field.index({"...", Slice(0, 48)});
  CHECK(channel_abs_sum(f, V, 64, 48) / static_cast<float>(V * 48) ==
        content.abs().mean().item<float>());
  CHECK(aten_strided_var(f, V, 64, 48) == torch::var(content).item<float>());
  // predictive_field's mean(|field[..., :32]|)
  CHECK(channel_abs_sum(f, V, 64, 32) / static_cast<float>(V * 32) ==
        field.index({"...", Slice(0, 32)}).abs().mean().item<float>());
  // the error field's mean and max of |E|, alone and after error_field.add_(g)
  const AbsStats st = abs_stats(f, V * 64);
  CHECK(st.sum / static_cast<float>(V * 64) == field.abs().mean().item<float>());
  CHECK(st.max == field.abs().max().item<float>());
  CHECK_FALSE(st.has_nan);
  torch::Tensor shifted = field.clone();
  const AbsStats added =
      add_and_abs_stats(shifted.data_ptr<float>(), static_cast<float>(0.0123), V * 64);
  torch::Tensor expected_shift = field.clone().add_(0.0123);
  CHECK(torch::equal(shifted, expected_shift));
  CHECK(added.sum / static_cast<float>(V * 64) == expected_shift.abs().mean().item<float>());
  CHECK(added.max == expected_shift.abs().max().item<float>());
  // error_to_field's walk over a buffer still holding an older field: only the flagged voxels
  // keep their values, every other one is read as zeros (error_field.zero_() before its boxes)
  {
    torch::Tensor stale = field.clone();
    std::vector<uint8_t> live(static_cast<size_t>(V), 0);
    for (int64_t v = 0; v < V; v += 7) live[static_cast<size_t>(v)] = 1;
    torch::Tensor keep = torch::zeros({V, 1});
    for (int64_t v = 0; v < V; ++v) keep[v][0] = live[static_cast<size_t>(v)] ? 1.0f : 0.0f;
    torch::Tensor expected =
        torch::where(keep.reshape({R, R, R, 1}) > 0, field, torch::zeros_like(field)).add_(0.0123);
    const AbsStats masked = add_and_abs_stats(stale.data_ptr<float>(), static_cast<float>(0.0123),
                                              V * 64, 64, live.data());
    CHECK(torch::equal(stale, expected));
    CHECK(masked.sum / static_cast<float>(V * 64) == expected.abs().mean().item<float>());
    CHECK(masked.max == expected.abs().max().item<float>());
  }
  // F.cosine_similarity's ((F / |F|) * (P / |P|)).sum() with |x| = sqrt(max(sum(x^2), eps^2))
  torch::Tensor other = torch::randn({R, R, R, 64});
  auto norm = [](const torch::Tensor& x) {
    return x.reshape({1, -1}).pow(2).sum(1, true).clamp_min(1e-8 * 1e-8).sqrt();
  };
  torch::Tensor fr = field.reshape({1, -1}), pr = other.reshape({1, -1});
  const float expected_similarity = ((fr / norm(field)) * (pr / norm(other))).sum(1).item<float>();
  const int64_t N = V * 64;
  torch::Tensor sq = torch::empty({N}), unit = torch::empty({N}), prod = torch::empty({N});
  squares(f, N, sq.data_ptr<float>());
  const float fn = std::sqrt(aten_sum(sq.data_ptr<float>(), N));
  CHECK(fn == norm(field).item<float>());
  squares(other.data_ptr<float>(), N, sq.data_ptr<float>());
  const float pn = std::sqrt(aten_sum(sq.data_ptr<float>(), N));
  divided(f, fn, N, unit.data_ptr<float>());
  unit_products(unit.data_ptr<float>(), other.data_ptr<float>(), pn, N, prod.data_ptr<float>());
  CHECK(aten_sum(prod.data_ptr<float>(), N) == expected_similarity);
  // _compute_attractor_influence's (P - F) * strength * valence * 0.01 * k, summed in order
  torch::Tensor total = torch::empty({V * 64});
  torch::Tensor third = torch::randn({R, R, R, 64});
  attractor_term(total.data_ptr<float>(), other.data_ptr<float>(), field.data_ptr<float>(), V * 64,
                 0.83f, -1.0f, static_cast<float>(0.01), 0.4f, true);
  attractor_term(total.data_ptr<float>(), third.data_ptr<float>(), field.data_ptr<float>(), V * 64,
                 0.21f, 1.0f, static_cast<float>(0.01), 0.7f, false);
  torch::Tensor expected = (other - field) * 0.83f * -1.0 * 0.01 * 0.4f;
  expected += (third - field) * 0.21f * 1.0 * 0.01 * 0.7f;
  CHECK(torch::equal(total, expected.flatten()));
}
