// em-brain's RewardTopologyShaper (brains/field/reward_topology_shaping.py): a reward above 0.1
// stores the field as an attractor (or repulsor), which pulls (pushes) the field each evolution
// while its strength * 0.95^age stays >= 0.001.
#pragma once

#include <torch/torch.h>

#include <deque>
#include <string>
#include <vector>

#include "brain/legacy/aten_sums.h"
#include "brain/legacy/legacy_state_io.h"

namespace fieldbrain::legacy {

class RewardTopologyShaper {
 public:
  explicit RewardTopologyShaper(int64_t max_attractors = 20, double persistence = 0.95)
      : max_attractors_(max_attractors), persistence_(persistence) {}

  // process_reward(field, reward, threshold 0.1). The "immediate deformation" it returns is
  // discarded by the brain: not computed.
  void process_reward(const torch::Tensor& field, double reward);
  // apply_topology_influence(field), added to the field in place (nothing when no attractor
  // lives, as adding the original's zeros changes nothing). `field` must be contiguous.
  void apply_influence(torch::Tensor& field);

  int64_t active_attractors() const { return static_cast<int64_t>(attractors_.size()); }
  int64_t total_rewards() const { return static_cast<int64_t>(reward_history_.size()); }

  void save(StateWriter& w, const std::string& part) const;
  void load(const StateReader& r, const std::string& part);

 private:
  struct Attractor {
    torch::Tensor pattern;
    double strength;
    double valence;  // np.sign(reward)
    int64_t age;
    float norm;  // the pattern's cosine norm max(|P|, 1e-8), computed once (-1: not yet)
  };
  int64_t max_attractors_;
  double persistence_;
  std::deque<Attractor> attractors_;
  std::deque<double> reward_history_;  // maxlen 1000
  std::vector<AtenRowSum> similarity_sums_;  // apply_influence's scratch, one per live attractor
};

}  // namespace fieldbrain::legacy
