#include "app/bench/bench_report.h"

#include <fmt/format.h>

#include <algorithm>

namespace fieldbrain {
namespace bench {
namespace {

bool is_field_step(const std::string& impl) {
  return impl.rfind("field_step", 0) == 0 || impl == "python_eager" || impl == "torch_compile";
}

const BenchRow* find(const std::vector<BenchRow>& rows, const std::string& impl, int64_t R,
                     int64_t B) {
  for (const auto& r : rows) {
    if (r.impl == impl && r.R == R && r.B == B && r.ms_per_cycle > 0) return &r;
  }
  return nullptr;
}

std::string ratio(double v) { return v > 0 ? fmt::format("{:.2f}", v) : "-"; }
std::string count(double v) { return v < 0 ? "-" : fmt::format("{:.1f}", v); }

// One line per cycle row of a per-stage quantity (`of` picks it), stages in cycle order.
void print_per_stage(const std::vector<BenchRow>& rows, const std::string& title,
                     const std::vector<std::pair<std::string, double>> BenchRow::*of, const char* format) {
  std::vector<std::string> names;  // in cycle order, as the first row with stages has them
  for (const auto& r : rows) {
    if (!(r.*of).empty()) {
      for (const auto& st : r.*of) names.push_back(st.first);
      break;
    }
  }
  if (names.empty()) return;
  fmt::print("\n{}:\n", title);
  fmt::print("{:<14} {:>3} {:>3}", "impl", "R", "B");
  for (const auto& n : names) fmt::print(" {:>{}}", n, std::max<size_t>(8, n.size()));
  fmt::print("\n");
  for (const auto& r : rows) {
    if ((r.*of).empty()) continue;
    fmt::print("{:<14} {:>3} {:>3}", r.impl, r.R, r.B);
    for (size_t i = 0; i < names.size(); ++i) {
      const double v = i < (r.*of).size() ? (r.*of)[i].second : 0.0;
      fmt::print(" {:>{}}", fmt::format(fmt::runtime(format), v), std::max<size_t>(8, names[i].size()));
    }
    fmt::print("\n");
  }
}

void print_stage_table(const std::vector<BenchRow>& rows) {
  print_per_stage(rows, "mean host ms per stage of the cycle (brain/field_brain.cpp, StageTimer)",
                  &BenchRow::stage_ms, "{:.3f}");
  print_per_stage(rows, "tensor buffers created per stage of the cycle (target: 0 on the fast path)",
                  &BenchRow::stage_tensors, "{:.1f}");
}

}  // namespace

void add_ratios(std::vector<BenchRow>& rows) {
  for (auto& r : rows) {
    // A load is no cycle; the read-out is one part of a cycle with no counterpart row.
    if (!r.skipped.empty() || r.impl == "load" || r.impl == "field_readout_op") continue;
    // The original em-brain is the baseline of the legacy profile only (another cycle).
    if (r.impl == "python_original") continue;
    const char* python = is_field_step(r.impl) ? "python_eager"
                         : r.impl == "legacy"  ? "python_original"
                                               : "python";
    if (const BenchRow* py = find(rows, python, r.R, r.B); py && py != &r && py->skipped.empty()) {
      r.speedup_vs_python = py->ms_per_cycle / r.ms_per_cycle;
    }
    if (r.impl == "legacy") continue;
    const bool rewarded = r.impl == "cpp_fast_reward" || r.impl == "cpp_reference_reward";
    const BenchRow* ref =
        find(rows, is_field_step(r.impl) ? "field_step_reference"
                   : rewarded            ? "cpp_reference_reward"
                                         : "cpp_reference", r.R, r.B);
    if (ref && r.impl != "copy") r.speedup_vs_reference = ref->ms_per_cycle / r.ms_per_cycle;
    if (const BenchRow* copy = find(rows, "copy", r.R, r.B)) {
      r.fraction_of_roofline = copy->ms_per_cycle / r.ms_per_cycle;
    }
  }
}

void print_batch_gains(const std::vector<BenchRow>& rows) {
  bool header = false;
  for (const auto& r : rows) {
    const bool cycle_like = r.impl == "cpp_fast" || r.impl == "cpp_reference" || r.impl == "group" ||
                            r.impl == "tick_singles" || r.impl == "python";
    if (!cycle_like || r.B == 1 || !r.skipped.empty() || r.ms_per_cycle <= 0) continue;
    const BenchRow* one = find(rows, r.impl, r.R, 1);
    if (one == nullptr) continue;
    if (!header) {
      fmt::print("\nrobot-cycles/s, B robots per call vs one (batching gain):\n");
      fmt::print("{:<14} {:>4} {:>3} {:>3} {:>12} {:>12} {:>7}\n", "impl", "dev", "R", "B",
                 "B=1 rc/s", "B rc/s", "ratio");
      header = true;
    }
    const double rc1 = 1000.0 / one->ms_per_cycle, rcB = 1000.0 * r.B / r.ms_per_cycle;
    fmt::print("{:<14} {:>4} {:>3} {:>3} {:>12.1f} {:>12.1f} {:>6.2f}x\n", r.impl, r.device, r.R, r.B,
               rc1, rcB, rcB / rc1);
  }
}

void print_reward_costs(const std::vector<BenchRow>& rows) {
  bool header = false;
  for (const auto& r : rows) {
    const std::string suffix = "_reward";
    if (r.impl.size() <= suffix.size() || r.impl.compare(r.impl.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const BenchRow* plain = find(rows, r.impl.substr(0, r.impl.size() - suffix.size()), r.R, r.B);
    if (plain == nullptr || !r.skipped.empty() || !plain->skipped.empty() || plain->ms_per_cycle <= 0) continue;
    if (!header) {
      fmt::print("\nwhat a reward costs: rewarded cycle vs plain cycle, same run (target <= 1.5x):\n");
      fmt::print("{:<21} {:>4} {:>3} {:>3} {:>11} {:>11} {:>7}\n", "impl", "dev", "R", "B",
                 "plain ms", "reward ms", "ratio");
      header = true;
    }
    fmt::print("{:<21} {:>4} {:>3} {:>3} {:>11.3f} {:>11.3f} {:>6.2f}x\n", r.impl, r.device, r.R, r.B,
               plain->ms_per_cycle, r.ms_per_cycle, r.ms_per_cycle / plain->ms_per_cycle);
  }
}

void print_table(const std::vector<BenchRow>& rows) {
  fmt::print(
      "{:<21} {:>4} {:>3} {:>3} {:>10} {:>9} {:>11} {:>7} {:>7} {:>6} {:>6} {:>8} {:>8} {:>6}  {}\n",
      "impl", "dev", "R", "B", "ms/cycle", "ms min", "robot-cyc/s", "allocs", "tensors", "syncs", "iters",
      "x python", "x ref", "roofl", "note");
  for (const auto& r : rows) {
    if (!r.skipped.empty()) {
      fmt::print("{:<21} {:>4} {:>3} {:>3} skipped: {}\n", r.impl, r.device, r.R, r.B, r.skipped);
      continue;
    }
    fmt::print(
        "{:<21} {:>4} {:>3} {:>3} {:>10.3f} {:>9.3f} {:>11.1f} {:>7} {:>7} {:>6} {:>6} {:>8} {:>8} {:>6}  "
        "{}\n",
        r.impl, r.device, r.R, r.B, r.ms_per_cycle, r.ms_min, 1000.0 * r.B / r.ms_per_cycle,
        count(r.allocs_per_cycle), count(r.tensor_buffers_per_cycle), count(r.syncs_per_cycle),
        r.iterations, ratio(r.speedup_vs_python), ratio(r.speedup_vs_reference),
        ratio(r.fraction_of_roofline), r.note);
  }
  fmt::print("allocs: allocations reaching the system allocator per cycle; tensors: tensor "
             "buffers the ops requested (served by the caching pool when it is on); CPU "
             "allocations only. x python: field-step rows over python_eager, cycle rows over "
             "the Python reference cycle (CPU), legacy over python_original (em-brain itself)\n");
  print_stage_table(rows);
}

nlohmann::json to_json(const std::vector<BenchRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    if (!r.skipped.empty()) {
      out.push_back({{"impl", r.impl}, {"device", r.device}, {"R", r.R}, {"B", r.B},
                     {"skipped", r.skipped}, {"note", r.note}});
      continue;
    }
    nlohmann::json j = {{"impl", r.impl},
                        {"device", r.device},
                        {"R", r.R},
                        {"B", r.B},
                        {"ms_per_cycle", r.ms_per_cycle},
                        {"ms_min", r.ms_min},
                        {"robot_cycles_per_s", 1000.0 * r.B / r.ms_per_cycle},
                        {"iterations", r.iterations},
                        {"threads", r.threads},
                        {"note", r.note}};
    j["allocs_per_cycle"] = r.allocs_per_cycle < 0 ? nlohmann::json() : nlohmann::json(r.allocs_per_cycle);
    j["syncs_per_cycle"] = r.syncs_per_cycle < 0 ? nlohmann::json() : nlohmann::json(r.syncs_per_cycle);
    j["tensor_buffers_per_cycle"] =
        r.tensor_buffers_per_cycle < 0 ? nlohmann::json() : nlohmann::json(r.tensor_buffers_per_cycle);
    if (!r.stage_ms.empty()) {
      nlohmann::json stages = nlohmann::json::object();
      for (const auto& st : r.stage_ms) stages[st.first] = st.second;
      j["stage_ms"] = stages;
      nlohmann::json tensors = nlohmann::json::object();
      for (const auto& st : r.stage_tensors) tensors[st.first] = st.second;
      if (!r.stage_tensors.empty()) j["stage_tensors"] = tensors;
    }
    if (r.speedup_vs_python > 0) j["speedup_vs_python"] = r.speedup_vs_python;
    if (r.speedup_vs_reference > 0) j["speedup_vs_reference"] = r.speedup_vs_reference;
    if (r.fraction_of_roofline > 0) j["fraction_of_roofline"] = r.fraction_of_roofline;
    out.push_back(std::move(j));
  }
  return {{"rows", out}};
}

}  // namespace bench
}  // namespace fieldbrain
