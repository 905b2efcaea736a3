// em-brain's FieldStrategicPlanner (brains/field/field_strategic_planner.py, commit ef2bdb8):
// discover_strategic_pattern and everything it calls. A discovery scores n candidate patterns
// for the memory channels 32..47 by simulating 100 steps of a simplified field evolution with
// each installed, keeps the best, and files it in a library that seeds later candidates.
//
// Every tensor operation is the original's ATen call on the same shapes and dtypes, and every
// draw comes from the generator passed in, in the original's order (the original draws from
// torch's global generator, which the pinned original's cycle shares), so a discovery run here
// and one run by the pinned original give the same pattern, score and library bit for bit.
// Host arithmetic follows Python's (doubles, the original's association order); numpy's
// np.exp/np.argsort over the library use the C library's exp and a stable sort (their results
// enter float32 tensors only as rounded scalars).
//
// Left out: _generate_novel_pattern (reached only from _generate_from_library with an empty
// library, which discover_strategic_pattern never calls), _evaluate_field_state,
// find_similar_patterns, get_pattern_statistics (never called by the brain).
#pragma once

#include <torch/torch.h>

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "brain/legacy/legacy_state_io.h"

namespace fieldbrain::legacy {

// StrategicPattern
struct StrategicPattern {
  torch::Tensor pattern;     // [R,R,R,16] float32
  double score = 0.0;
  torch::Tensor signature;   // behavioral_signature [4]
  torch::Tensor trajectory;  // behavioral_trajectory [100, 4]
  double persistence = 0.0;
  torch::Tensor context;     // context_embedding [4]
  double creation_time = 0.0;
  int64_t usage_count = 0;
};

// _measure_field_tensions: each in [0, 1], total their mean.
struct FieldTensions {
  double information = 0, learning = 0, confidence = 0, prediction = 0, novelty = 0,
         monotony = 0, total = 0;
};
FieldTensions measure_field_tensions(const torch::Tensor& field);

class StrategicPlanner {
 public:
  explicit StrategicPlanner(int64_t resolution);

  // discover_strategic_pattern(field, reward, exploration_level, n_candidates) at clock now_s
  // (the original's time.time()). The best candidate, or none when no candidate's score beats
  // -inf (NaN scores); a best with score > 0 has been filed in the library. `stop` (may be
  // null) is polled between simulation steps: when it turns true the discovery is abandoned
  // (returns none; the library and the draws taken so far stay as they are).
  std::optional<StrategicPattern> discover(const torch::Tensor& field, at::Generator& gen,
                                           double now_s, int n_candidates = 32,
                                           double exploration_level = 0.5,
                                           const std::atomic<bool>* stop = nullptr);

  const std::vector<StrategicPattern>& library() const { return library_; }
  void set_library(std::vector<StrategicPattern> library) { library_ = std::move(library); }
  int64_t resolution() const { return R_; }

 private:
  // _evaluate_pattern (_evaluate_pattern_tension_based): score, signature, trajectory.
  struct Evaluation {
    double score;
    torch::Tensor signature, trajectory;
    bool stopped;
  };
  Evaluation evaluate(const torch::Tensor& base_field, const torch::Tensor& pattern,
                      at::Generator& gen, const std::atomic<bool>* stop) const;
  torch::Tensor evolve_with_pattern(const torch::Tensor& field, const torch::Tensor& pattern,
                                    at::Generator& gen) const;
  torch::Tensor generate_from_library(const torch::Tensor& context, double exploration,
                                      at::Generator& gen, double now_s);
  void add_to_library(const StrategicPattern& p, double now_s);

  int64_t R_;
  torch::Tensor diffusion_kernel_;  // [1,1,3,3,3]
  bool fused_step_;                 // planner_evolution.h
  std::vector<StrategicPattern> library_;
};

// _generate_tension_targeted_pattern (brain/legacy/planner_patterns.cpp).
torch::Tensor generate_tension_targeted_pattern(int64_t resolution, const FieldTensions& t,
                                                at::Generator& gen);

// The library and a pattern in an archive (legacy_state_io.h), under `part`.
void save_patterns(StateWriter& w, const std::string& part,
                   const std::vector<StrategicPattern>& patterns);
std::vector<StrategicPattern> load_patterns(const StateReader& r, const std::string& part);

}  // namespace fieldbrain::legacy
