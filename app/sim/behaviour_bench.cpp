#include "app/sim/behaviour_bench.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "app/sim/sim_robot.h"

namespace fieldbrain::sim {

nlohmann::json run_behaviour_bench(const SimOptions& base) {
  namespace fs = std::filesystem;
  fs::create_directories(base.out_dir);
  nlohmann::json rows = nlohmann::json::array();
  std::vector<ControllerKind> kinds = {ControllerKind::Random, ControllerKind::Forward};
  if (!base.server.empty()) kinds.insert(kinds.begin(), ControllerKind::Brain);

  for (ControllerKind kind : kinds) {
    SimOptions o = base;
    o.controller = kind;
    o.baseline = false;  // the random row below is the baseline
    o.out_dir = (fs::path(base.out_dir) / controller_name(kind)).string();
    std::fprintf(stderr, "[bench] %s: %d robot(s) x %lld cycles\n", controller_name(kind), o.robots,
                 o.cycles);
    const SimReport r = run_sim(o);
    long long cycles = 0, collisions = 0, errors = 0;
    double distance = 0, motor = 0;
    size_t cells = 0;
    for (const auto& robot : r.robots) {
      cycles += robot.cycles;
      collisions += robot.collisions;
      distance += robot.distance_m;
      cells += robot.cells_visited;
      motor += robot.mean_abs_motor;
      errors += static_cast<long long>(robot.errors.size());
    }
    const double n = double(r.robots.size());
    rows.push_back({{"controller", controller_name(kind)},
                    {"robots", r.robots.size()},
                    {"cycles", cycles},
                    {"collisions", collisions},
                    {"collisions_per_1000_cycles", cycles ? 1000.0 * collisions / cycles : 0.0},
                    {"distance_m_per_robot", distance / n},
                    {"cells_visited_per_robot", cells / n},
                    {"area_m2_per_robot", cells / n * kExploreCell * kExploreCell},
                    {"mean_abs_motor", motor / n},
                    {"cycles_per_second", r.seconds > 0 ? cycles / r.seconds : 0.0},
                    {"errors", errors},
                    {"run_dir", o.out_dir}});
  }

  std::printf("\n%-8s %7s %8s %14s %11s %8s %9s %11s %8s\n", "control", "robots", "cycles",
              "coll/1000cyc", "distance_m", "cells", "area_m2", "mean|motor|", "errors");
  for (const auto& row : rows) {
    std::printf("%-8s %7d %8lld %14.1f %11.2f %8.1f %9.2f %11.3f %8lld\n",
                row["controller"].get<std::string>().c_str(), row["robots"].get<int>(),
                row["cycles"].get<long long>(), row["collisions_per_1000_cycles"].get<double>(),
                row["distance_m_per_robot"].get<double>(),
                row["cells_visited_per_robot"].get<double>(),
                row["area_m2_per_robot"].get<double>(), row["mean_abs_motor"].get<double>(),
                row["errors"].get<long long>());
  }
  if (base.server.empty()) std::printf("(brain skipped: no --server given)\n");

  nlohmann::json out = {{"benchmark", "behaviour"},    {"arena_file", base.arena_path},
                        {"seed", base.seed},           {"cycles_per_robot", base.cycles},
                        {"cell_size_m", kExploreCell}, {"rows", rows}};
  std::ofstream f(fs::path(base.out_dir) / "behaviour.json");
  f << out.dump(2) << "\n";
  std::printf("wrote %s\n", (fs::path(base.out_dir) / "behaviour.json").string().c_str());
  return out;
}

}  // namespace fieldbrain::sim
