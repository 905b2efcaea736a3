#include "brain/legacy/sensory_mapping.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "brain/legacy/exact_block_sums.h"
#include "brain/legacy/python_numerics.h"

namespace fieldbrain::legacy {

using torch::indexing::Slice;

namespace {
// F.cosine_similarity(p[None], torch.stack(rows), 1) as floats: row by row with the exact
// stand-in where the start-up probe found it equal to the batched call (no tensor asked for),
// else the batched call itself.
template <typename Rows>
std::vector<float> cosine_rows(const torch::Tensor& p, const Rows& rows) {
  std::vector<float> out;
  if (!exact_cosine_available()) {
    const torch::Tensor sims =
        torch::cosine_similarity(p.unsqueeze(0), torch::stack(std::vector<torch::Tensor>(
                                                     rows.begin(), rows.end())),
                                 1)
            .contiguous();
    out.assign(sims.data_ptr<float>(), sims.data_ptr<float>() + sims.numel());
    return out;
  }
  const torch::Tensor pc = p.contiguous();
  for (const torch::Tensor& row : rows) {
    TORCH_CHECK(row.numel() == pc.numel(), "cosine_rows: a stored pattern of another length");
    const torch::Tensor rc = row.contiguous();
    out.push_back(exact_cosine_similarity(pc.data_ptr<float>(), rc.data_ptr<float>(), pc.numel()));
  }
  return out;
}
}  // namespace

SensoryMapping::SensoryMapping(std::vector<int64_t> field_shape, double resonance_threshold,
                               double spatial_decay)
    : shape_(std::move(field_shape)),
      resonance_threshold_(resonance_threshold),
      spatial_decay_(spatial_decay),
      occupancy_(torch::zeros({shape_[0], shape_[1], shape_[2]}, torch::kFloat32)) {}

// EmergentSensoryMapping._hash_pattern: hash(tuple(round(p * 10) / 10)) as float32 values.
SensoryMapping::Key SensoryMapping::hash_pattern(const torch::Tensor& p) {
  const float* v = p.data_ptr<float>();
  Key key(static_cast<std::size_t>(p.numel()));
  for (int64_t i = 0; i < p.numel(); ++i) {
    float q = std::nearbyint(v[i] * 10.0f) / 10.0f;
    if (q == 0.0f) q = 0.0f;  // hash(-0.0) == hash(0.0)
    std::memcpy(&key[static_cast<std::size_t>(i)], &q, sizeof q);
  }
  return key;
}

// EmergentSensoryMapping.find_imprint_location
Location SensoryMapping::find_imprint_location(const torch::Tensor& raw, const torch::Tensor& field,
                                               at::Generator& gen) {
  torch::Tensor flat = raw.flatten();
  torch::Tensor p = flat / (torch::norm(flat) + 1e-8);  // safe_normalize
  const Key h = hash_pattern(p);
  // _update_pattern_importance keeps a per-hash reward score nothing reads: left out.
  if (auto loc = find_existing_location(p, field)) {
    last_strategy_ = 0;
    update_pattern_memory(p, h, *loc);
    return *loc;
  }
  if (auto loc = find_resonant_location(p, field)) {
    last_strategy_ = 1;
    update_pattern_memory(p, h, *loc);
    return *loc;
  }
  if (auto loc = find_correlated_location(h)) {
    last_strategy_ = 2;
    update_pattern_memory(p, h, *loc);
    return *loc;
  }
  last_strategy_ = 3;
  Location loc = find_empty_location(field, gen);
  update_pattern_memory(p, h, loc);
  occupancy_.index_put_({loc[0], loc[1], loc[2]}, 1.0);
  mapping_events_ += 1;
  return loc;
}

// EmergentSensoryMapping._find_existing_location. The similarities to the stored patterns are
// one batched F.cosine_similarity (each row reduces as the original's single call does).
std::optional<Location> SensoryMapping::find_existing_location(const torch::Tensor& p,
                                                               const torch::Tensor& field) {
  std::optional<Location> best;
  if (pattern_memory_.empty()) return best;
  TORCH_CHECK(field.dim() == 4 && field.stride(3) == 1, "the field's channels must be contiguous");
  double best_similarity = 0.0;
  const std::vector<float> sims = cosine_rows(p, pattern_memory_);
  const float* sp = sims.data();
  for (std::size_t i = 0; i < pattern_memory_.size(); ++i) {
    const auto similarity = static_cast<double>(sp[i]);
    if (similarity > 0.9 && similarity > best_similarity) {
      const Location& l = location_memory_[i];
      // field[x-1:x+2, ...]: a start of -1 (index 0) is an empty slice, a NaN mean, a reject
      if (l[0] == 0 || l[1] == 0 || l[2] == 0) continue;
      // torch.mean(torch.abs(field[x-1:x+2, y-1:y+2, z-1:z+2])), the slices clipped at the
      // far edge (exact_block_sums: ATen's float)
      FieldBlock local;
      local.data = field.data_ptr<float>() + (l[0] - 1) * field.stride(0) +
                   (l[1] - 1) * field.stride(1) + (l[2] - 1) * field.stride(2);
      for (int k = 0; k < 3; ++k) {
        local.sizes[k] = std::min(field.size(k), l[k] + 2) - (l[k] - 1);
        local.strides[k] = field.stride(k);
      }
      local.channels = field.size(3);
      const auto local_energy = static_cast<double>(exact_block_abs_mean(local));
      if (local_energy < 2.0) {
        best = l;
        best_similarity = similarity;
      }
    }
  }
  return best;
}

// EmergentSensoryMapping._pattern_to_field_projection (host, float32 adds in the original's
// loop order; a voxel hit twice at an edge gets both adds)
torch::Tensor SensoryMapping::pattern_to_field_projection(const torch::Tensor& p) const {
  torch::Tensor proj = torch::zeros({shape_[0], shape_[1], shape_[2]}, torch::kFloat32);
  float* out = proj.data_ptr<float>();
  const float* v = p.data_ptr<float>();
  const int64_t n = p.numel();
  const auto grid = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(n))));
  double weights[7];
  for (int k = 0; k < 7; ++k) weights[k] = python_pow(spatial_decay_, k);
  for (int64_t i = 0; i < n; ++i) {
    const double value = static_cast<double>(v[i]);
    const int64_t gx = i % grid, gy = i / grid;
    const int64_t fx = gx * shape_[0] / grid, fy = gy * shape_[1] / grid, fz = i * shape_[2] / n;
    for (int64_t dx = -1; dx <= 1; ++dx)
      for (int64_t dy = -1; dy <= 1; ++dy)
        for (int64_t dz = -1; dz <= 1; ++dz) {
          const int64_t nx = std::min(std::max<int64_t>(fx + dx, 0), shape_[0] - 1);
          const int64_t ny = std::min(std::max<int64_t>(fy + dy, 0), shape_[1] - 1);
          const int64_t nz = std::min(std::max<int64_t>(fz + dz, 0), shape_[2] - 1);
          const double w = weights[std::abs(dx) + std::abs(dy) + std::abs(dz)];
          float& cell = out[(nx * shape_[1] + ny) * shape_[2] + nz];
          cell = cell + static_cast<float>(value * w);
        }
  }
  return proj;
}

// EmergentSensoryMapping._find_resonant_location
std::optional<Location> SensoryMapping::find_resonant_location(const torch::Tensor& p,
                                                               const torch::Tensor& field) {
  torch::Tensor pattern_field = pattern_to_field_projection(p);
  torch::Tensor field_projection = field.index({"...", Slice(0, 8)}).mean(3);
  torch::Tensor resonance =
      torch::cosine_similarity(pattern_field.unsqueeze(3), field_projection.unsqueeze(3), 3);
  torch::Tensor kernel = torch::ones({1, 1, 3, 3, 3}, torch::kFloat32) / 27.0;
  torch::Tensor padded =
      torch::constant_pad_nd(resonance.unsqueeze(0).unsqueeze(0), {1, 1, 1, 1, 1, 1}, 0);
  torch::Tensor smooth =
      torch::conv3d(padded, kernel, c10::nullopt, at::IntArrayRef{1}, at::IntArrayRef{0}).squeeze();
  const double max_resonance = torch::max(smooth).item<double>();
  if (max_resonance > resonance_threshold_) {
    const int64_t idx = torch::argmax(smooth.flatten()).item<int64_t>();
    return Location{idx / (shape_[1] * shape_[2]), (idx / shape_[2]) % shape_[1], idx % shape_[2]};
  }
  return std::nullopt;
}

// EmergentSensoryMapping._find_correlated_location
std::optional<Location> SensoryMapping::find_correlated_location(const Key& h) {
  for (const auto& [key, row] : correlation_) {
    if (key != h) continue;
    for (const auto& [other, correlation] : row) {
      if (!(correlation > 0.5)) continue;
      for (std::size_t i = 0; i < pattern_keys_.size(); ++i)
        if (pattern_keys_[i] == other)
          if (auto nearby = find_nearby_empty(location_memory_[i])) return nearby;
    }
    break;
  }
  return std::nullopt;
}

// EmergentSensoryMapping._find_empty_location
Location SensoryMapping::find_empty_location(const torch::Tensor& field, at::Generator& gen) {
  torch::Tensor information = torch::mean(torch::abs(field), 3);
  torch::Tensor availability = (1 - occupancy_) * (1 - torch::sigmoid(information * 5));
  availability += at::randn(availability.sizes(), gen, torch::kFloat32) * 0.1;
  availability *= (information > 0.01).to(torch::kFloat32);
  const int64_t idx = torch::argmax(availability.flatten()).item<int64_t>();
  return Location{idx / (shape_[1] * shape_[2]), (idx / shape_[2]) % shape_[1], idx % shape_[2]};
}

// EmergentSensoryMapping._find_nearby_empty
std::optional<Location> SensoryMapping::find_nearby_empty(const Location& l, int64_t radius) const {
  const float* occ = occupancy_.data_ptr<float>();
  for (int64_t r = 1; r <= radius; ++r)
    for (int64_t dx = -r; dx <= r; ++dx)
      for (int64_t dy = -r; dy <= r; ++dy)
        for (int64_t dz = -r; dz <= r; ++dz) {
          if (std::max({std::abs(dx), std::abs(dy), std::abs(dz)}) != r) continue;
          const int64_t nx = l[0] + dx, ny = l[1] + dy, nz = l[2] + dz;
          if (nx < 0 || nx >= shape_[0] || ny < 0 || ny >= shape_[1] || nz < 0 || nz >= shape_[2])
            continue;
          if (occ[(nx * shape_[1] + ny) * shape_[2] + nz] < 0.5f) return Location{nx, ny, nz};
        }
  return std::nullopt;
}

// EmergentSensoryMapping._update_pattern_memory
void SensoryMapping::update_pattern_memory(const torch::Tensor& p, const Key& h,
                                           const Location& loc) {
  pattern_memory_.push_back(p.clone());
  pattern_keys_.push_back(h);
  location_memory_.push_back(loc);
  if (pattern_memory_.size() > 100) {
    pattern_memory_.pop_front();
    pattern_keys_.pop_front();
    location_memory_.pop_front();
  }
  const std::size_t begin = tail_begin(pattern_memory_, 10);
  std::vector<std::size_t> rows;
  std::vector<torch::Tensor> others;
  for (std::size_t i = begin; i < pattern_memory_.size(); ++i)
    if (pattern_keys_[i] != h) rows.push_back(i), others.push_back(pattern_memory_[i]);
  if (rows.empty()) return;
  const std::vector<float> sims = cosine_rows(p, others);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const Key& other = pattern_keys_[rows[r]];
    const auto correlation = static_cast<double>(sims[r]);
    auto row = std::find_if(correlation_.begin(), correlation_.end(),
                            [&](const auto& e) { return e.first == h; });
    if (row == correlation_.end()) {
      correlation_.emplace_back(h, std::vector<std::pair<Key, double>>{});
      row = std::prev(correlation_.end());
    }
    auto cell = std::find_if(row->second.begin(), row->second.end(),
                             [&](const auto& e) { return e.first == other; });
    if (cell == row->second.end())
      row->second.emplace_back(other, correlation);
    else
      cell->second = correlation;
    co_activation_[h < other ? std::make_pair(h, other) : std::make_pair(other, h)] += 1;
  }
}

int64_t SensoryMapping::unique_patterns() const {
  std::set<Key> keys(pattern_keys_.begin(), pattern_keys_.end());
  return static_cast<int64_t>(keys.size());
}

void SensoryMapping::save(StateWriter& w, const std::string& part) const {
  if (!pattern_memory_.empty())
    w.tensor(part + ".pattern_memory", torch::stack(std::vector<torch::Tensor>(
                                           pattern_memory_.begin(), pattern_memory_.end())));
  w.tensor(part + ".occupancy", occupancy_);
  nlohmann::json corr = nlohmann::json::array();
  for (const auto& [k, row] : correlation_) {
    nlohmann::json jr = nlohmann::json::array();
    for (const auto& [o, c] : row) jr.push_back({o, c});
    corr.push_back({k, jr});
  }
  nlohmann::json co = nlohmann::json::array();
  for (const auto& [k, n] : co_activation_) co.push_back({k.first, k.second, n});
  w.state[part] = {
      {"keys", std::vector<Key>(pattern_keys_.begin(), pattern_keys_.end())},
      {"locations", std::vector<Location>(location_memory_.begin(), location_memory_.end())},
      {"correlation", corr},
      {"co_activation", co},
      {"mapping_events", mapping_events_},
      {"last_strategy", last_strategy_}};
}

void SensoryMapping::load(const StateReader& r, const std::string& part) {
  const auto& j = r.at(part);
  auto keys = j.at("keys").get<std::vector<Key>>();
  auto locations = j.at("locations").get<std::vector<Location>>();
  std::deque<torch::Tensor> memory;
  if (!keys.empty()) {
    torch::Tensor m = r.tensor(part + ".pattern_memory");
    if (m.dim() != 2 || m.size(0) != static_cast<int64_t>(keys.size()))
      throw std::runtime_error("legacy state: pattern memory does not match its keys");
    for (int64_t i = 0; i < m.size(0); ++i) memory.push_back(m[i].clone());
  }
  if (locations.size() != keys.size())
    throw std::runtime_error("legacy state: pattern locations do not match the memory");
  torch::Tensor occupancy = r.tensor(part + ".occupancy", torch::kFloat32, occupancy_.sizes());
  decltype(correlation_) corr;
  for (const auto& jr : j.at("correlation")) {
    std::vector<std::pair<Key, double>> row;
    for (const auto& c : jr.at(1)) row.emplace_back(c.at(0).get<Key>(), c.at(1).get<double>());
    corr.emplace_back(jr.at(0).get<Key>(), std::move(row));
  }
  decltype(co_activation_) co;
  for (const auto& c : j.at("co_activation"))
    co[{c.at(0).get<Key>(), c.at(1).get<Key>()}] = c.at(2).get<int64_t>();
  pattern_memory_ = std::move(memory);
  pattern_keys_.assign(keys.begin(), keys.end());
  location_memory_.assign(locations.begin(), locations.end());
  occupancy_ = occupancy;
  correlation_ = std::move(corr);
  co_activation_ = std::move(co);
  mapping_events_ = j.at("mapping_events").get<int64_t>();
  last_strategy_ = j.at("last_strategy").get<int>();
}

}  // namespace fieldbrain::legacy
