#include "brain/novelty_modulation.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "brain/cycle_facts.h"
#include "brain/portable_math.h"

namespace fieldbrain {

NoveltyModulationState::NoveltyModulationState(NoveltyModulationOptions options_,
                                               torch::Device timestamps_device)
    : options(std::move(options_)) {
  const int64_t B = options.batch();
  const auto dev = options.device();
  const auto opts = torch::TensorOptions().dtype(torch::kFloat).device(dev);
  nov = register_module("nov", RingBuffer(RingBufferOptions(B, kNovCapacity, {512}).device(dev)));
  nov_ts = register_buffer("nov_ts", torch::zeros({B, 200}, torch::TensorOptions(torch::kLong).device(timestamps_device)));
  perr = register_module("perr", RingBuffer(RingBufferOptions(B, kErrCapacity, {}).device(dev)));
  pimp = register_module("pimp", RingBuffer(RingBufferOptions(B, kErrCapacity, {}).device(dev)));
  cwi = register_buffer("cwi", torch::zeros({B}, torch::kLong));
  auto scalar = [&](const char* name, double init) {
    return register_buffer(name, torch::full({B}, init, opts));
  };
  si = scalar("si", 0.5);
  sc = scalar("sc", 0.5);
  plateau = scalar("plateau", 0.0);
  sigma = scalar("sigma", 0.01);
  prev_imp = scalar("prev_imp", 0.5);
  prev_amp = scalar("prev_amp", 1.0);
  novelty = scalar("novelty", 0.0);
  drive = scalar("drive", 0.0);
  explore = scalar("explore", 0.0);
  amp = scalar("amp", 0.0);
  imp = scalar("imp", 0.0);
  decay = scalar("decay", 0.0);
  info = scalar("info", 0.0);
}

void NoveltyModulationState::write_facts(int64_t b, int64_t* f) const {
  f[kFactPerrCount] = perr->count(b);
  f[kFactPimpCount] = pimp->count(b);
  f[kFactNovCount] = nov->count(b);
  f[kFactCyclesWithoutInput] = cycles_without_input(b);
}

NoveltyModulationImpl::NoveltyModulationImpl(NoveltyModulationOptions options_)
    : NoveltyModulationState(std::move(options_), torch::kCPU) {
  nov_idx_ = torch::empty({512}, torch::kLong);
  for (int64_t i = 0; i < 512; ++i) {
    nov_idx_[i] = static_cast<int64_t>(static_cast<double>(i) * 4095.0 / 511.0);
  }
  nov_idx_ = nov_idx_.to(options.device());
}

void NoveltyModulationImpl::update(const CycleContext& ctx, const torch::Tensor& field,
                                   const torch::Tensor& last_err,
                                   const torch::Tensor& activity_stats, const torch::Tensor& has_ef,
                                   const torch::Tensor& boost) {
  const int64_t B = options.batch();
  const auto dev = field.device();

  // Information: level and spread of the content channels.
  torch::Tensor info_now, var;
  if (activity_stats.defined()) {
    info_now = activity_stats.select(1, 0);
    var = activity_stats.select(1, 1);
  } else {
    const auto X = field.slice(1, 0, 48);
    info_now = X.abs().mean({1, 2, 3, 4});
    // Per robot: each robot's content block is contiguous, so this reads the field in place
    // (X.reshape({B, -1}) would copy all B blocks first whenever B > 1).
    std::vector<torch::Tensor> per_robot;
    for (int64_t b = 0; b < B; ++b) {
      per_robot.push_back(X[b].reshape({-1}).var(0, /*unbiased=*/true));
    }
    var = torch::stack(per_robot);
  }
  si.copy_(si * 0.95 + info_now * 0.05 * (1 + var));
  info.copy_(info_now);

  // Novelty of the corner block against the recent memory, decayed with age.
  const auto corner = field.slice(1, 0, 8).slice(2, 0, 8).slice(3, 0, 8).slice(4, 0, 8)
                          .permute({0, 2, 3, 4, 1})
                          .reshape({B, 4096});
  auto v = corner.index_select(1, nov_idx_);
  v = portable::unit_rows(v, 1);
  auto age = torch::zeros({B, 200}, torch::kFloat);
  std::vector<bool> recent_ok(B * 200, false), empty(B);
  std::vector<float> wobble(B);
  {
    auto ts = nov_ts.accessor<int64_t, 2>();
    auto ag = age.accessor<float, 2>();
    for (int64_t b = 0; b < B; ++b) {
      const int64_t n = ctx.cycle[b];
      empty[b] = nov->count(b) == 0;
      wobble[b] = static_cast<float>(0.1 * std::sin(0.01 * static_cast<double>(n)));
      for (int64_t j = 0; j < std::min<int64_t>(nov->count(b), 200); ++j) {
        ag[b][j] = static_cast<float>(n - ts[b][j]);
        recent_ok[b * 200 + j] = n - ts[b][j] < 1000;
      }
    }
  }
  const auto ok = CycleContext::flags(recent_ok, dev).view({B, 200}) > 0.5;
  const auto sim = torch::matmul(nov->data, v.unsqueeze(2)).squeeze(2) *
                   torch::exp(-age.to(dev) / 500);
  const auto masked = torch::where(ok, sim, torch::full_like(sim, -std::numeric_limits<float>::infinity()));
  const auto best = masked.amax(1).clamp_min(0.0);
  auto nov_val = (1 - best + CycleContext::values(wobble, dev)).clamp_min(0.0);
  nov_val = torch::where(CycleContext::flags(empty, dev) > 0.5, torch::ones_like(nov_val), nov_val);
  novelty.copy_(nov_val);
  {
    auto ts = nov_ts.accessor<int64_t, 2>();
    for (int64_t b = 0; b < B; ++b) ts[b][nov->count(b) % 200] = ctx.cycle[b];
  }
  nov->push(v);

  // Smoothed confidence from the recent error level; plateau of the improvement.
  const auto err_s = torch::where(ctx.scored_f > 0.5, last_err.abs().mean(1),
                                  torch::full({B}, 0.3, si.options()));
  perr->push(err_s);
  std::vector<bool> warm(B), push_imp(B), check_plateau(B);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t c = perr->count(b);
    warm[b] = c > 5;
    push_imp[b] = pimp_pushes(c);
  }
  const auto recent = torch::where(CycleContext::flags(warm, dev) > 0.5, perr->mean_last(10),
                                   torch::full({B}, 0.5, si.options()));
  pimp->push(perr->mean_ages(10, 20) - recent, push_imp);
  for (int64_t b = 0; b < B; ++b) check_plateau[b] = push_imp[b] && pimp->count(b) > 10;
  const auto flat = pimp->mean_last(10).abs() < 0.001;
  const auto next_plateau = torch::where(flat, plateau + 1, torch::zeros_like(plateau));
  plateau.copy_(torch::where(CycleContext::flags(check_plateau, dev) > 0.5, next_plateau, plateau));
  sc.copy_(sc * 0.9 + 0.1 / (1 + recent * 5));

  // Input presence and the modulation.
  std::vector<bool> dreams(B);
  auto* w = cwi.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    w[b] = cycles_without_input_after(w[b], ctx.has_input[b]);
    dreams[b] = dreaming(w[b]);
  }
  const auto nI = (si / 1.5).clamp(0.0, 1.0);
  drive.copy_(torch::where(CycleContext::flags(dreams, dev) > 0.5, torch::full_like(nI, 0.95),
                           (nI + sc) / 2));
  auto ex = ((1 - nI) * (nov_val * 0.5 + 0.5) + (plateau / 200).clamp_max(0.5) + 0.3).clamp_max(1.0);
  explore.copy_((ex + (1 - sc) * 0.2).clamp_max(1.0));
  amp.copy_((1 - sc) * 0.5 + 1);
  imp.copy_((1 - drive) * 0.7 + 0.1);
  decay.copy_(0.999 - nI * 0.01);
  // The imprint of this cycle already used the previous values (legacy B5, kept).
  prev_imp.copy_(imp);
  prev_amp.copy_(amp);
}

void NoveltyModulationImpl::update_sigma(const CycleContext& ctx, const torch::Tensor& has_ef,
                                         const torch::Tensor& boost) {
  const int64_t B = options.batch();
  std::vector<float> base(B);
  for (int64_t b = 0; b < B; ++b) {
    base[b] = static_cast<float>(0.01 + 0.09 * std::log10(1.0 + static_cast<double>(ctx.cycle[b]) / 1000.0));
  }
  const auto factor = torch::where(has_ef > 0.5, boost, torch::ones_like(boost));
  sigma.copy_((CycleContext::values(base, sigma.device()) * factor).clamp_max(0.3));
}

}  // namespace fieldbrain
