// How the legacy cycle's strategic-pattern discovery requests are served: one type per planner
// mode (brain/legacy/planner_mode.h), chosen once when the brain is built. The cycle asks at
// the original's step 7 (discover_async), then takes whatever discovery has finished (the
// original's callback) before its field evolves.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <vector>

#include "brain/legacy/planner_mode.h"
#include "brain/legacy/strategic_planner.h"

namespace fieldbrain::legacy {

class PatternDiscovery {
 public:
  virtual ~PatternDiscovery() = default;
  virtual LegacyPlanner mode() const = 0;

  // discover_async(field, reward, callback) at clock now_s, drawing from `gen` (the robot's
  // generator). Off drops it; Sync runs the discovery now; Async hands a copy of the field to
  // the worker, replacing a request it has not started (the original cancels such a future).
  virtual void request(const torch::Tensor& field, at::Generator& gen, double now_s) = 0;
  // The best pattern of the latest discovery finished since the last call, if it found one.
  virtual std::optional<StrategicPattern> take_finished() = 0;

  // The planner's library as of the last finished discovery (for save), and its restore (load;
  // only on a fresh instance).
  virtual std::vector<StrategicPattern> library() const = 0;
  virtual void restore_library(std::vector<StrategicPattern> library) = 0;

  // Finished discoveries and the wall time of the last one (telemetry: the planner's cost).
  virtual int64_t discoveries() const = 0;
  virtual double last_discovery_seconds() const = 0;
};

// resolution: the field's R.
std::unique_ptr<PatternDiscovery> make_pattern_discovery(LegacyPlanner mode, int64_t resolution);

}  // namespace fieldbrain::legacy
