#include "python/csrc/legacy_state_views.h"

#include <string>

#include "python/csrc/python_values.h"

namespace fieldbrain::python {
namespace {

// The saved tensor under `key` (a copy made by the save), or None where the save has none.
py::object saved_tensor(const legacy::StateWriter& saved, const std::string& key) {
  const auto it = saved.tensors.find(key);
  if (it == saved.tensors.end()) return py::none();
  return py::cast(it->second);
}

py::set string_set(const nlohmann::json& j) {
  py::set out;
  for (const auto& v : j) out.add(py::str(v.get<std::string>()));
  return out;
}

// TopologyRegion's fields from its saved entry (brain/legacy/topology_regions.cpp, save()).
py::dict region_dict(const legacy::StateWriter& saved, const nlohmann::json& r,
                     const std::string& key) {
  py::dict d;
  d["region_id"] = to_python(r.at("id"));
  const auto& c = r.at("center");
  d["spatial_center"] = py::make_tuple(c.at(0).get<int64_t>(), c.at(1).get<int64_t>(),
                                       c.at(2).get<int64_t>());
  d["feature_center"] = to_python(r.at("feature_center"));
  d["activation_pattern"] = saved_tensor(saved, key + ".pattern");
  for (const char* name : {"mean_activation", "stability", "coherence", "discovery_time",
                           "last_activation", "activation_count", "total_strength", "importance",
                           "consolidation_level", "abstraction_level", "prediction_confidence",
                           "behavioral_monotony", "sensor_indices", "motor_sequence"}) {
    d[name] = to_python(r.at(name));
  }
  d["associated_regions"] = string_set(r.at("associated"));
  d["causal_predecessors"] = to_python(r.at("predecessors"));
  d["causal_successors"] = to_python(r.at("successors"));
  d["is_sensory_predictive"] = to_python(r.at("predictive"));
  d["prediction_errors"] = to_python(r.at("prediction_history"));
  d["prediction_momentum"] = saved_tensor(saved, key + ".momentum");
  return d;
}

}  // namespace

py::dict legacy_topology_regions(const legacy::StateWriter& saved) {
  const nlohmann::json& j = saved.state.at("topology");
  py::list regions;
  std::size_t i = 0;
  for (const auto& r : j.at("regions")) {
    regions.append(region_dict(saved, r, "topology.region" + std::to_string(i++)));
  }
  py::list history;
  for (const auto& h : j.at("activation_history")) {
    history.append(py::make_tuple(h.at(0).get<double>(), h.at(1).get<std::string>(),
                                  h.at(2).get<double>()));
  }
  py::dict out;
  out["regions"] = regions;
  out["region_count"] = to_python(j.at("region_count"));
  out["discovery_count"] = to_python(j.at("discovery_count"));
  out["activation_history"] = history;
  out["last_cleanup_time"] = to_python(j.at("last_cleanup_time"));
  return out;
}

py::dict legacy_reward_shaping(const legacy::StateWriter& saved) {
  const nlohmann::json& j = saved.state.at("reward_shaping");
  py::list attractors;
  std::size_t i = 0;
  for (const auto& a : j.at("attractors")) {
    py::dict d;
    d["pattern"] = saved_tensor(saved, "reward_shaping.attractor" + std::to_string(i++));
    d["strength"] = to_python(a.at("strength"));
    d["valence"] = to_python(a.at("valence"));
    d["age"] = to_python(a.at("age"));
    attractors.append(d);
  }
  py::dict out;
  out["attractors"] = attractors;
  out["reward_history"] = to_python(j.at("reward_history"));
  out["last_reward_signal"] = to_python(saved.state.at("brain").at("last_reward_signal"));
  return out;
}

}  // namespace fieldbrain::python
