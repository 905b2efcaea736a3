#include "brain/sensory_imprint.h"

#include <array>
#include <cmath>
#include <limits>
#include <map>

#include "brain/cycle_facts.h"
#include "brain/portable_math.h"

namespace fieldbrain {

SensoryImprintState::SensoryImprintState(SensoryImprintOptions options_) : options(std::move(options_)) {
  const int64_t B = options.batch(), S = options.sensory_dim(), R = options.resolution();
  const auto dev = options.device();
  map = register_module("map", RingBuffer(RingBufferOptions(B, kMapCapacity, {S}).device(dev)));
  map_loc = register_buffer("map_loc", torch::zeros({B, 100, 3}, torch::TensorOptions(torch::kLong).device(dev)));
  occ = register_buffer("occ", torch::zeros({B, R, R, R}, torch::TensorOptions(torch::kFloat).device(dev)));
}

void SensoryImprintState::write_facts(int64_t b, int64_t* f) const {
  f[kFactMapCount] = map->count(b);
}

SensoryImprintImpl::SensoryImprintImpl(SensoryImprintOptions options_)
    : SensoryImprintState(std::move(options_)) {
  const int64_t S = options.sensory_dim(), R = options.resolution();
  const auto dev = options.device();

  // Resonant projection: sensor i lands at (fx, fy, fz) and spreads 0.95^(L1 offset) over its
  // 3x3x3 neighbourhood, clamped at the faces (clamped offsets accumulate on the face voxel).
  const auto g = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(S))));
  std::map<std::pair<int64_t, int64_t>, double> entries;  // (voxel, sensor) -> weight
  auto clampR = [R](int64_t v) { return std::min<int64_t>(R - 1, std::max<int64_t>(0, v)); };
  for (int64_t i = 0; i < S; ++i) {
    const auto fx = static_cast<int64_t>(static_cast<double>((i % g) * R) / static_cast<double>(g));
    const auto fy = static_cast<int64_t>(static_cast<double>((i / g) * R) / static_cast<double>(g));
    const auto fz = static_cast<int64_t>(static_cast<double>(i * R) / static_cast<double>(S));
    for (int64_t dx = -1; dx <= 1; ++dx) {
      for (int64_t dy = -1; dy <= 1; ++dy) {
        for (int64_t dz = -1; dz <= 1; ++dz) {
          const int64_t v = clampR(fx + dx) * R * R + clampR(fy + dy) * R + clampR(fz + dz);
          const double w = std::pow(0.95, std::abs(dx) + std::abs(dy) + std::abs(dz));
          entries[{v, i}] += w;
        }
      }
    }
  }
  const auto E = static_cast<int64_t>(entries.size());
  proj_voxel_ = torch::empty({E}, torch::kLong);
  proj_sensor_ = torch::empty({E}, torch::kLong);
  proj_weight_ = torch::empty({E}, torch::kFloat);
  int64_t e = 0;
  for (const auto& kv : entries) {
    proj_voxel_[e] = kv.first.first;
    proj_sensor_[e] = kv.first.second;
    proj_weight_[e] = static_cast<float>(kv.second);
    ++e;
  }
  proj_voxel_ = proj_voxel_.to(dev);
  proj_sensor_ = proj_sensor_.to(dev);
  proj_weight_ = proj_weight_.to(dev);
  // The blob's 125 offsets (dx, dy, dz in -2..2) and their weights 0.8^(|dx|+|dy|+|dz|).
  blob_offsets_ = torch::empty({125, 3}, torch::kLong);
  blob_weight_ = torch::empty({125}, torch::kFloat);
  for (int i = 0; i < 125; ++i) {
    const int d[3] = {i / 25 - 2, (i / 5) % 5 - 2, i % 5 - 2};
    for (int a = 0; a < 3; ++a) blob_offsets_[i][a] = d[a];
    blob_weight_[i] = static_cast<float>(std::pow(0.8, std::abs(d[0]) + std::abs(d[1]) + std::abs(d[2])));
  }
  blob_offsets_ = blob_offsets_.to(dev);
  blob_weight_ = blob_weight_.to(dev);
}

torch::Tensor SensoryImprintImpl::project(const torch::Tensor& p) const {
  const int64_t B = p.size(0), R = options.resolution();
  auto proj = torch::zeros({B, R * R * R}, p.options());
  proj.index_add_(1, proj_voxel_, p.index_select(1, proj_sensor_) * proj_weight_);
  return proj;
}

torch::Tensor SensoryImprintImpl::apply(const CycleContext& ctx, torch::Tensor& field,
                                        const ImprintDrive& drive, const torch::Tensor& eps_loc) {
  const int64_t B = options.batch(), R = options.resolution();
  const auto dev = field.device();
  const auto& a = ctx.sensors;
  const auto skip_f = CycleContext::flags(ctx.skip_imprint, dev);
  const auto skip = skip_f > 0.5;

  // 1. Strength.
  auto s = (ctx.reward_d * 0.5 + 0.5) * drive.prev_imp * drive.prev_amp;
  s = torch::where(drive.has_ef > 0.5, s * drive.boost, s * ((1 - drive.conf) * 0.9 + 0.1));
  s = torch::where(skip, torch::zeros_like(s), s);

  // 2-3. Unit pattern and the shared activity maps.
  const auto p = portable::unit_rows(a, 1);
  const auto act = field.abs().mean(1);  // [B,R,R,R]
  const auto box = torch::avg_pool3d(act.unsqueeze(1), 3, 1, 1, false, false).view({B, -1});

  // 4. Existing: the most similar remembered pattern whose place is not crowded.
  const auto cos = portable::cosine_similarity(p.unsqueeze(1), map->data, 2);  // [B,100]
  const auto valid = map->valid_mask() > 0.5;
  const auto flat_loc = map_loc.select(2, 0) * (R * R) + map_loc.select(2, 1) * R + map_loc.select(2, 2);
  const auto cand = valid & (cos > 0.9) & (box.gather(1, flat_loc) < 2.0);
  const auto any_cand = cand.any(1);
  const auto best = torch::where(cand, cos, torch::full_like(cos, -std::numeric_limits<float>::infinity())).argmax(1);
  const auto existing_loc = flat_loc.gather(1, best.unsqueeze(1)).squeeze(1);

  // 5. Resonant: where the projected pattern agrees in sign with the content channels 0-7.
  const auto proj = project(p).view({B, R, R, R});
  const auto fp = field.slice(1, 0, 8).mean(1);
  const auto res = portable::cosine_similarity(proj.unsqueeze(-1), fp.unsqueeze(-1), -1);
  const auto sm = torch::avg_pool3d(res.unsqueeze(1), 3, 1, 1, false, true).view({B, -1});
  const auto accepted = sm.amax(1) > 0.3;
  const auto res_loc = sm.argmax(1);

  // 6. Empty: unoccupied, quiet places, with a little noise to break ties.
  auto q = (1 - occ) * (1 - torch::sigmoid(act * 5)) + eps_loc * 0.1;
  q = q * (act > 0.01).to(torch::kFloat);
  const auto empty_loc = q.view({B, -1}).argmax(1);

  // 7. Choose; mark places taken by the empty strategy.
  const auto loc = torch::where(any_cand, existing_loc, torch::where(accepted, res_loc, empty_loc));
  const auto chose_empty = (~any_cand) & (~accepted) & (~skip);
  auto occ_flat = occ.view({B, -1});
  const auto loc1 = loc.unsqueeze(1);
  occ_flat.scatter_(1, loc1,
                    torch::where(chose_empty.unsqueeze(1), torch::ones({B, 1}, occ.options()),
                                 occ_flat.gather(1, loc1)));

  // 8. Remember the pattern and its place.
  const auto lx = torch::div(loc, R * R, "floor");
  const auto ly = torch::remainder(torch::div(loc, R, "floor"), R);
  const auto lz = torch::remainder(loc, R);
  const auto loc3 = torch::stack({lx, ly, lz}, 1);
  std::vector<bool> push(B);
  for (int64_t b = 0; b < B; ++b) {
    push[b] = !ctx.skip_imprint[b];
    if (push[b]) map_loc[b][map->count(b) % 100].copy_(loc3[b]);
  }
  map->push(p, push);

  // 9. The blob: s * 0.8^(L1 distance) within +-2 on every axis, clipped, all channels. Only
  // its 125 voxels are touched (one scatter, no pass over the field): an offset that falls
  // outside the field adds 0 at a clamped index instead, which changes nothing.
  const auto pos = loc3.unsqueeze(1) + blob_offsets_.unsqueeze(0);  // [B,125,3]
  const auto inside = ((pos >= 0) & (pos < R)).all(2);              // [B,125]
  const auto clamped = pos.clamp(0, R - 1);
  const auto flat = clamped.select(2, 0) * (R * R) + clamped.select(2, 1) * R + clamped.select(2, 2);
  const auto add = s.view({B, 1}) * (blob_weight_.unsqueeze(0) * inside.to(torch::kFloat));
  field.view({B, 64, R * R * R})
      .scatter_add_(2, flat.unsqueeze(1).expand({B, 64, 125}), add.unsqueeze(1).expand({B, 64, 125}));
  return s;
}

}  // namespace fieldbrain
