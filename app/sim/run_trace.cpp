#include "app/sim/run_trace.h"

namespace fieldbrain::sim {

nlohmann::json arena_shapes(const Arena& arena) {
  using nlohmann::json;
  json walls = json::array(), boxes = json::array(), circles = json::array();
  for (const auto& w : arena.walls) walls.push_back({w.a.x, w.a.y, w.b.x, w.b.y});
  for (const auto& b : arena.boxes) boxes.push_back({b.first.x, b.first.y, b.second.x, b.second.y});
  for (const auto& c : arena.circles) circles.push_back({c.c.x, c.c.y, c.r});
  json shapes = {{"name", arena.name},
                 {"size", {arena.width, arena.height}},
                 {"walls", walls},
                 {"boxes", boxes},
                 {"circles", circles}};
  if (arena.line) {
    json points = json::array();
    for (const auto& p : arena.line->points) points.push_back({p.x, p.y});
    shapes["line"] = {{"points", points}, {"closed", arena.line->closed}};
  }
  return shapes;
}

nlohmann::json trace_json(const RobotTrace& t) {
  using nlohmann::json;
  json x = json::array(), y = json::array(), heading = json::array(), motors = json::array(),
       reward = json::array(), collided = json::array(), latency = json::array(),
       time = json::array();
  for (const CycleSample& s : t.cycles) {
    x.push_back(s.x);
    y.push_back(s.y);
    heading.push_back(s.heading);
    motors.push_back(s.motors);
    reward.push_back(s.reward);
    collided.push_back(s.collided ? 1 : 0);
    latency.push_back(s.latency_ms);
    time.push_back(s.t);
  }
  json conf_cycle = json::array(), conf_value = json::array();
  for (const ConfidenceSample& c : t.confidence) {
    conf_cycle.push_back(c.cycle);
    conf_value.push_back(c.confidence);
  }
  json gaps = json::array();
  for (const LinkGap& g : t.gaps) {
    gaps.push_back({{"cycle", g.cycle},
                    {"at_s", g.at_s},
                    {"seconds", g.seconds},
                    {"attempts", g.attempts},
                    {"resumed", g.resumed},
                    {"brain_cycle", g.brain_cycle},
                    {"cause", g.cause}});
  }
  return {{"x", x},
          {"y", y},
          {"heading", heading},
          {"motors", motors},
          {"reward", reward},
          {"collided", collided},
          {"latency_ms", latency},
          {"t", time},
          {"confidence", {{"cycle", conf_cycle}, {"value", conf_value}}},
          {"gaps", gaps}};
}

nlohmann::json run_data(const Arena& arena, const std::vector<std::string>& robot_keys,
                        const std::vector<RobotTrace>& traces,
                        const std::vector<SliceRecord>& slices) {
  using nlohmann::json;
  json robots = json::array();
  for (size_t i = 0; i < traces.size(); ++i) {
    json r = trace_json(traces[i]);
    r["index"] = i;
    r["robot_key"] = i < robot_keys.size() ? robot_keys[i] : "";
    robots.push_back(std::move(r));
  }
  json slice_list = json::array();
  for (const SliceRecord& s : slices) {
    slice_list.push_back({{"robot", s.robot},
                          {"channel", s.slice.channel},
                          {"z", s.slice.z},
                          {"resolution", s.slice.resolution},
                          {"values", s.slice.values}});
  }
  return {{"arena", arena_shapes(arena)}, {"robots", robots}, {"slices", slice_list}};
}

}  // namespace fieldbrain::sim
