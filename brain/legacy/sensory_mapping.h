// em-brain's EmergentSensoryMapping (brains/field/emergent_sensory_mapping.py): where in the
// field an input pattern is imprinted (existing place, resonance, correlation, empty place),
// with the pattern memory, correlation dict and occupancy map that decide it.
#pragma once

#include <torch/torch.h>

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "brain/legacy/legacy_state_io.h"

namespace fieldbrain::legacy {

using Location = std::array<int64_t, 3>;

class SensoryMapping {
 public:
  SensoryMapping(std::vector<int64_t> field_shape, double resonance_threshold,
                 double spatial_decay);

  // find_imprint_location(sensory_pattern, field_state): draws randn_like([R,R,R]) from
  // `gen` only when no existing, resonant or correlated location is found.
  Location find_imprint_location(const torch::Tensor& raw, const torch::Tensor& field,
                                 at::Generator& gen);

  int64_t mapping_events() const { return mapping_events_; }
  std::size_t memory_size() const { return pattern_memory_.size(); }
  int64_t unique_patterns() const;
  double occupancy_ratio() const { return occupancy_.mean().item<double>(); }
  const torch::Tensor& occupancy() const { return occupancy_; }

  // The last branch taken: 0 existing, 1 resonant, 2 correlated, 3 empty (for tests).
  int last_strategy() const { return last_strategy_; }

  void save(StateWriter& w, const std::string& part) const;
  void load(const StateReader& r, const std::string& part);

 private:
  // _hash_pattern: equal keys exactly when the original's hashes are equal (the tuple of
  // round(p*10)/10 float32 values, -0.0 == 0.0).
  using Key = std::vector<int32_t>;
  static Key hash_pattern(const torch::Tensor& p);

  std::optional<Location> find_existing_location(const torch::Tensor& p,
                                                 const torch::Tensor& field);
  std::optional<Location> find_resonant_location(const torch::Tensor& p,
                                                 const torch::Tensor& field);
  std::optional<Location> find_correlated_location(const Key& h);
  Location find_empty_location(const torch::Tensor& field, at::Generator& gen);
  std::optional<Location> find_nearby_empty(const Location& loc, int64_t radius = 5) const;
  torch::Tensor pattern_to_field_projection(const torch::Tensor& p) const;
  void update_pattern_memory(const torch::Tensor& p, const Key& h, const Location& loc);

  std::vector<int64_t> shape_;
  double resonance_threshold_, spatial_decay_;
  std::deque<torch::Tensor> pattern_memory_;  // maxlen 100
  std::deque<Key> pattern_keys_;              // the hash of each memory entry
  std::deque<Location> location_memory_;      // maxlen 100
  // correlation_matrix: dict of dicts, both in insertion order
  std::vector<std::pair<Key, std::vector<std::pair<Key, double>>>> correlation_;
  std::map<std::pair<Key, Key>, int64_t> co_activation_;  // key: the sorted pair
  torch::Tensor occupancy_;                               // [R,R,R] float32
  int64_t mapping_events_ = 0;
  int last_strategy_ = -1;
};

}  // namespace fieldbrain::legacy
