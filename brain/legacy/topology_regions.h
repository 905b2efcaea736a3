// em-brain's TopologyRegionSystem and TopologyRegion (brains/field/topology_region_system.py):
// salient voxels become regions (every 5th cycle), regions are matched by place and pattern,
// and active regions are assigned sensors to predict. Regions keep the original's dict
// insertion order; the clock (now_s) is an input.
#pragma once

#include <torch/torch.h>

#include <array>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "brain/legacy/legacy_state_io.h"

namespace fieldbrain::legacy {

// TopologyRegion (the dataclass), with the fields the cycle reads or counts.
struct TopologyRegion {
  std::string id;
  std::array<int64_t, 3> center{};  // spatial_center
  int64_t feature_center = 0;
  torch::Tensor pattern;  // activation_pattern, float32 [<=5,<=5,<=5]
  double mean_activation = 0, stability = 0, coherence = 0;
  double discovery_time = 0, last_activation = 0;
  int64_t activation_count = 0;
  double total_strength = 0;
  double importance = 1.0;
  int64_t consolidation_level = 0;
  std::set<std::string> associated_regions;
  std::map<std::string, double> causal_predecessors, causal_successors;
  int64_t abstraction_level = 0;
  bool is_sensory_predictive = false;
  std::vector<int64_t> sensor_indices;
  std::deque<double> prediction_history;  // sensory_prediction_history's errors, maxlen 50
  double prediction_confidence = 0.0;
  torch::Tensor prediction_momentum;       // float32 [n] or undefined (None)
  std::deque<std::string> motor_sequence;  // maxlen 20
  double behavioral_monotony = 0.0;

  // TopologyRegion.update_activation
  void update_activation(double strength, const std::vector<double>& motor, double now_s);
  // TopologyRegion.predict_from_field: float32 [len(sensor_indices)]; updates the momentum.
  torch::Tensor predict_from_field(const torch::Tensor& temporal_field);
  // TopologyRegion.update_prediction_success
  void update_prediction_success(const torch::Tensor& actual, const torch::Tensor& predicted);
};

class TopologyRegionSystem {
 public:
  TopologyRegionSystem(std::vector<int64_t> field_shape, double stability_threshold,
                       int64_t max_regions);

  // detect_topology_regions: the activated region IDs, in order.
  std::vector<std::string> detect(const torch::Tensor& field, const std::vector<double>& motor,
                                  double now_s);
  // update_sensory_predictions
  void update_sensory_predictions(int64_t sensory_dim, double now_s);
  // get_predictive_regions, in dict order.
  std::vector<TopologyRegion*> predictive_regions();

  TopologyRegion* find(const std::string& id);
  int64_t size() const { return static_cast<int64_t>(regions_.size()); }
  int64_t max_regions() const { return max_regions_; }
  int64_t causal_link_count() const;
  // Regions activated within `window_s` of now (get_statistics' "active").
  int64_t active_count(double now_s, double window_s) const;
  // The cleanup clock starts at the first cycle's time (the pinned original builds the brain
  // at t0 = the first cycle's time).
  void start_clock(double now_s) {
    if (!clock_started_) last_cleanup_time_ = now_s, clock_started_ = true;
  }

  void save(StateWriter& w, const std::string& part) const;
  void load(const StateReader& r, const std::string& part);

  // _find_salient_regions' candidate centres (<= 10) of a contiguous field, in the original's
  // order; loops over the field's memory with ATen's floats (exposed for
  // test/legacy/exact_prediction_test.cpp, which holds it against the ATen expressions).
  std::vector<std::array<int64_t, 3>> salient_points(const torch::Tensor& field);

 private:
  struct Salient {
    std::array<int64_t, 3> center;
    int64_t feature_center;
    torch::Tensor pattern;
    double strength, stability, coherence;
  };
  std::vector<Salient> find_salient_regions(const torch::Tensor& field);
  torch::Tensor extract_pattern(const torch::Tensor& field, const std::array<int64_t, 3>& c,
                                int64_t feature_center) const;
  std::optional<std::size_t> find_matching_region(const torch::Tensor& pattern,
                                                  const std::array<int64_t, 3>& c) const;
  void update_causal_links(const std::vector<std::string>& current, double now_s);
  void cleanup_weak_regions(double now_s);

  std::vector<int64_t> field_shape_;
  double stability_threshold_;
  double similarity_threshold_ = 0.7;
  int64_t max_regions_;
  std::vector<TopologyRegion> regions_;  // dict insertion order
  int64_t region_count_ = 0;
  int64_t discovery_count_ = 0;
  struct Activation {
    double time;
    std::string id;
    double strength;
  };
  std::deque<Activation> activation_history_;  // maxlen 100
  double causal_window_ = 2.0;
  double cleanup_interval_ = 300.0;
  double last_cleanup_time_ = 0.0;
  bool clock_started_ = false;
  std::vector<float> voxel_means_, abs_block_;  // salient_points' scratch (reused)
};

}  // namespace fieldbrain::legacy
