// The legacy brain's topology regions and reward shaping as Python values, under the names
// em-brain's TopologyRegionSystem / TopologyRegion / RewardTopologyShaper give them, so that a
// test can compare the port's state with the original's field by field (docs/python.md,
// "Parity in one process").
//
// Read from the state the brain's save holds (LegacyCycle::save): that is the whole state each
// part keeps (a reload must resume bit for bit), so nothing the port keeps is left out, and the
// legacy classes need no getter of their own. Copies, never views of the live state.
#pragma once

#include <torch/extension.h>

#include "brain/legacy/legacy_profile.h"

namespace fieldbrain::python {

namespace py = pybind11;

// {"regions": [dict per region, in the original's dict order], "region_count",
//  "discovery_count", "activation_history": [(time, region_id, strength)], "last_cleanup_time"}.
// A region's dict: region_id, spatial_center (tuple), feature_center, activation_pattern
// (tensor), mean_activation, stability, coherence, discovery_time, last_activation,
// activation_count, total_strength, importance, consolidation_level, associated_regions (set),
// causal_predecessors, causal_successors (dicts), abstraction_level, is_sensory_predictive,
// sensor_indices, prediction_errors (the "error" of each sensory_prediction_history entry, the
// only one of its keys the port keeps), prediction_confidence, prediction_momentum (tensor or
// None), motor_sequence (list), behavioral_monotony.
py::dict legacy_topology_regions(const legacy::StateWriter& saved);

// {"attractors": [{"pattern" (tensor), "strength", "valence", "age"}, oldest first],
//  "reward_history": [...], "last_reward_signal" (the brain's _last_reward_signal: the reward
//  the last cycle read)}.
py::dict legacy_reward_shaping(const legacy::StateWriter& saved);

}  // namespace fieldbrain::python
