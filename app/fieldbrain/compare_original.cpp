#include "app/fieldbrain/compare_original.h"

#include <fmt/core.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "app/fieldbrain/legacy_fixture.h"
#include "app/fieldbrain/recording.h"
#include "brain/brain_config.h"
#include "brain/legacy/legacy_profile.h"

namespace fieldbrain {

namespace fs = std::filesystem;

namespace {

constexpr const char* kOriginalBrain = "server/src/brains/field/unified_field_brain.py";

// The fixture meta's number under the first of `keys` it has.
double meta_number(const nlohmann::json& meta, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (meta.contains(k) && meta.at(k).is_number()) return meta.at(k).get<double>();
  }
  throw std::runtime_error(fmt::format("meta.json has no number \"{}\"", *keys.begin()));
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A float64 C-order .npy file [rows, cols] (what run_original.py --inputs reads).
void write_npy_f64(const std::string& path, const std::vector<double>& values, int64_t rows,
                   int64_t cols) {
  std::string header =
      fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}", rows, cols);
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.write(reinterpret_cast<const char*>(&len), 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(reinterpret_cast<const char*>(values.data()),
          static_cast<std::streamsize>(values.size() * sizeof(double)));
  if (!f) throw std::runtime_error("cannot write " + path);
}

// Runs run_original.py with `args`: its progress lines ("cycle n/N ...") go to `out`; the
// rest (the original's own chatter) is kept, its last lines in `tail` (the one-line reason of
// an exit 2 is the last). Returns its exit status.
int run_script(const std::string& args, std::FILE* out, std::vector<std::string>& tail) {
  const std::string cmd = fmt::format("{} {}/scripts/legacy/run_original.py {} 2>&1",
                                      FIELDBRAIN_PYTHON, FIELDBRAIN_SOURCE_DIR, args);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + cmd);
  char buf[1024];
  while (fgets(buf, sizeof buf, pipe) != nullptr) {
    std::string line(buf);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    if (line.empty()) continue;
    if (line.find_first_not_of(' ') == line.find("cycle ")) {
      fmt::print(out, "    em-brain {}\n", line.substr(line.find("cycle ")));
      std::fflush(out);
    }
    tail.push_back(line);
    if (tail.size() > 12) tail.erase(tail.begin());
  }
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// The reason a run of the original failed: its last line, and the lines before it.
std::string failure(const std::string& what, int rc, const std::vector<std::string>& tail) {
  std::string text = fmt::format("{} (run_original.py exit {})", what, rc);
  if (!tail.empty()) text += ": " + tail.back();
  if (tail.size() > 1) {
    text += "\n  its last lines:";
    for (const auto& l : tail) text += "\n    " + l;
  }
  return text;
}

struct TempDir {
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "fieldbrain-compare-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot make a temporary folder");
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  fs::path path;
};

// A run of the original the user must hear about: exit 2 with its reason.
struct OriginalFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void print_row(std::FILE* out, const OriginalComparison& c, double tolerance) {
  fmt::print(out, "{:<28} {:>6} {:>12.3g} {:>7} {:>12.3g} {:>8} {}\n", c.name, c.cycles,
             c.worst_motor, c.worst_motor_cycle, c.worst_confidence,
             c.region_mismatches == 0
                 ? std::string("equal")
                 : fmt::format("{}x@{}", c.region_mismatches, c.first_region_mismatch),
             c.pass(tolerance) ? "PASS" : "FAIL");
  std::fflush(out);
}

}  // namespace

std::string OriginalScenario::name() const {
  return fmt::format("r{}_s{}m{}_{}{}", resolution, sensory_dim, motor_dim, stream,
                     rewards ? "_reward" : "");
}

std::vector<OriginalScenario> all_original_scenarios() {
  std::vector<OriginalScenario> all;
  for (int64_t R : {16, 32}) {
    for (auto [S, M] : {std::pair<int64_t, int64_t>{24, 4}, {12, 6}}) {
      for (const char* stream : {"smooth", "random", "negative"}) {
        for (bool rewards : {false, true}) all.push_back({R, S, M, stream, rewards});
      }
    }
  }
  return all;
}

std::vector<OriginalScenario> quick_original_scenarios() {
  return {{16, 24, 4, "smooth", false}, {16, 12, 6, "negative", true}, {32, 24, 4, "random", true}};
}

std::vector<OriginalScenario> pick_original_scenarios(const std::vector<std::string>& names) {
  if (names.empty()) return quick_original_scenarios();
  const auto all = all_original_scenarios();
  if (names.size() == 1 && names[0] == "all") return all;
  std::vector<OriginalScenario> picked;
  for (const auto& n : names) {
    const auto it =
        std::find_if(all.begin(), all.end(), [&](const auto& s) { return s.name() == n; });
    if (it == all.end()) {
      throw std::invalid_argument(
          fmt::format("unknown scenario \"{}\" (names are "
                      "r<16|32>_s<24m4|12m6>_<smooth|random|negative>[_reward], "
                      "e.g. r16_s24m4_smooth, or all)",
                      n));
    }
    picked.push_back(*it);
  }
  return picked;
}

std::string em_brain_problem(const std::string& path) {
  std::error_code ec;
  if (path.empty()) return "--em-brain PATH is required (the em-brain checkout to compare with)";
  if (!fs::is_directory(path, ec)) return fmt::format("{} is not a directory", path);
  if (!fs::is_regular_file(fs::path(path) / kOriginalBrain, ec)) {
    return fmt::format(
        "{} is not an em-brain checkout: it has no {} (clone "
        "https://github.com/onuse/em-brain and check out ef2bdb8)",
        path, kOriginalBrain);
  }
  return "";
}

bool OriginalComparison::pass(double tolerance) const {
  return cycles > 0 && worst_motor <= tolerance && worst_confidence <= tolerance &&
         region_mismatches == 0;
}

OriginalComparison compare_with_fixture(
    const std::string& dir, const std::string& name, double tolerance,
    const std::function<void(int64_t, double, double, bool)>& on_cycle) {
  torch::NoGradGuard no_grad;
  legacy::LegacyFixture fx;
  legacy::LegacyOptions o;
  double t0 = 0, dt = kLegacyClockStepS;
  try {
    fx = legacy::load_legacy_fixture(dir);
    o.resolution = static_cast<int64_t>(meta_number(fx.meta, {"R", "resolution"}));
    o.sensory_dim = static_cast<int64_t>(meta_number(fx.meta, {"S", "sensory_dim"}));
    o.motor_dim = static_cast<int64_t>(meta_number(fx.meta, {"M", "motor_dim"}));
    o.seed = static_cast<uint64_t>(meta_number(fx.meta, {"seed"}));
    t0 = meta_number(fx.meta, {"t0"});
    dt = meta_number(fx.meta, {"dt"});
    o.planner =
        fx.meta.value("planner", "off") == "sync" ? LegacyPlanner::Sync : LegacyPlanner::Off;
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("fixture {}: {}", dir, e.what()));
  }
  const torch::Tensor inputs = fx.inputs.to(torch::kFloat64).contiguous();
  const torch::Tensor motors = fx.motors.to(torch::kFloat64).contiguous();
  const torch::Tensor confidence = fx.confidence.to(torch::kFloat64).contiguous();
  const torch::Tensor regions = fx.regions.to(torch::kInt64).contiguous();
  const int64_t n = inputs.size(0), L = inputs.size(1), M = o.motor_dim;
  if (motors.size(0) != n || motors.size(1) != M || confidence.size(0) != n ||
      regions.size(0) != n) {
    throw std::runtime_error(
        fmt::format("fixture {}: inputs, motors, confidence and regions "
                    "disagree on the cycle count or M",
                    dir));
  }
  legacy::LegacyBrain brain(o);
  OriginalComparison c;
  c.name = name;
  const double* in = inputs.data_ptr<double>();
  const double* want = motors.data_ptr<double>();
  for (int64_t k = 0; k < n; ++k) {
    const std::vector<double> list(in + k * L, in + (k + 1) * L);
    const std::vector<double> got = brain->step(list, t0 + static_cast<double>(k) * dt);
    double d = 0;
    for (int64_t j = 0; j < M; ++j) d = std::max(d, std::abs(got[j] - want[k * M + j]));
    if (!std::isfinite(d)) d = INFINITY;
    const nlohmann::json state = brain->brain_state();
    const double dc = std::abs(state.at("prediction_confidence").get<double>() -
                               confidence.data_ptr<double>()[k]);
    // The original's brain state holds the regions as {"total": n, ...}; a count is taken too.
    const nlohmann::json& r = state.at("topology_regions");
    const int64_t count = r.is_object() ? r.at("total").get<int64_t>() : r.get<int64_t>();
    const bool same_regions = count == regions.data_ptr<int64_t>()[k];
    if (c.worst_motor_cycle < 0 || d > c.worst_motor) c.worst_motor = d, c.worst_motor_cycle = k;
    if (c.confidence_cycle < 0 || dc > c.worst_confidence)
      c.worst_confidence = dc, c.confidence_cycle = k;
    if (!same_regions && c.region_mismatches++ == 0) c.first_region_mismatch = k;
    ++c.cycles;
    if (on_cycle) on_cycle(k, d, dc, same_regions);
  }
  (void)tolerance;
  return c;
}

namespace {

// (scenario name, fixture folder) of each comparison to make.
using FixtureRuns = std::vector<std::pair<std::string, std::string>>;

// Why the options cannot run (the command's exit 2), or "" when they can; fills `scenarios`
// with the matrix cells to generate when neither fixtures nor a recording are given.
std::string usage_problem(const CompareOriginalOptions& options,
                          std::vector<OriginalScenario>& scenarios) {
  const bool generate = options.fixtures.empty();
  try {
    if (!generate && (!options.recording.empty() || !options.scenarios.empty())) {
      throw std::invalid_argument("--fixture cannot be combined with --scenarios or --recording");
    }
    if (!options.recording.empty() && !options.scenarios.empty()) {
      throw std::invalid_argument("--recording cannot be combined with --scenarios");
    }
    if (options.cycles < 1) throw std::invalid_argument("--cycles must be at least 1");
    if (options.planner != "off" && options.planner != "sync")
      throw std::invalid_argument("--planner must be off or sync (async is not reproducible)");
    if (!(options.tolerance >= 0)) throw std::invalid_argument("--tolerance must be >= 0");
    if (generate && options.recording.empty())
      scenarios = pick_original_scenarios(options.scenarios);
    if (generate) {
      const std::string problem = em_brain_problem(options.em_brain);
      if (!problem.empty()) throw std::invalid_argument(problem);
    }
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

// A recording the original can replay from its start: recorded from cycle 0, nothing dropped,
// its brain config readable, and not served with the (unreproducible) async planner.
BrainConfig replayable_brain_config(const Recording& r) {
  if (r.start_cycle != 0) {
    throw std::invalid_argument("the recording starts at cycle " + std::to_string(r.start_cycle) +
                                " (a resumed brain): record with a fresh state directory");
  }
  if (r.dropped != 0) throw std::invalid_argument("the recording dropped cycles");
  try {
    return r.meta.at("brain").get<BrainConfig>();
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("the recording's brain config: ") + e.what());
  }
}

// The first `n` cycles' input lists as the server gave them to the robot's legacy brain, into a
// float64 .npy [n, list length] at `path` (what run_original.py --inputs reads).
void write_recording_inputs(const Recording& r, const BrainConfig& brain, int64_t n,
                            const std::string& path) {
  std::vector<double> rows;
  int64_t width = 0;
  for (int64_t k = 0; k < n; ++k) {
    const auto list = legacy_input_list(r.sensors.data() + k * r.sensory_dim, r.sensory_dim,
                                        r.reward[static_cast<size_t>(k)], brain.legacy.reward);
    width = static_cast<int64_t>(list.size());
    rows.insert(rows.end(), list.begin(), list.end());
  }
  write_npy_f64(path, rows, n, width);
}

// Runs the original on a recorded session: its inputs as the list the server gave its legacy
// brain, its seed as the server derived it for that robot, the fixed clock from cycle 0.
// Returns the fixture folder it wrote under `work`.
std::pair<std::string, std::string> run_original_on_recording(const CompareOriginalOptions& options,
                                                              const fs::path& work,
                                                              std::FILE* out) {
  const Recording r = load_recording(options.recording);
  const BrainConfig brain = replayable_brain_config(r);
  const int64_t n = std::min(r.cycles, options.cycles);
  const std::string inputs = (work / "recording_inputs.npy").string();
  write_recording_inputs(r, brain, n, inputs);
  if (brain.legacy.planner == LegacyPlanner::Async) {
    throw std::invalid_argument(
        "the recording was served with \"legacy_planner\": \"async\", which is not "
        "reproducible (docs/legacy.md \"Planner\"): nothing to compare it with");
  }
  const uint32_t seed = legacy_robot_seed(brain.seed, r.key_hash);
  const std::string name = "recording_" + fs::path(r.folder).filename().string();
  const std::string dir = (work / name).string();
  fmt::print(out,
             "{}: robot {}, {} cycles, S={} M={} R={}, seed {} (config seed {} and the "
             "robot key)\n",
             name, r.robot_key, n, r.sensory_dim, r.motor_dim, brain.resolution, seed, brain.seed);
  std::fflush(out);
  std::vector<std::string> tail;
  const int rc = run_script(
      fmt::format("--em-brain {} --out {} --inputs {} --R {} --S {} --M {} --seed {} --planner {}",
                  shell_quote(options.em_brain), shell_quote(dir), shell_quote(inputs),
                  brain.resolution, r.sensory_dim, r.motor_dim, seed,
                  to_string(brain.legacy.planner)),
      out, tail);
  if (rc != 0) throw OriginalFailed(failure("the original failed on the recording", rc, tail));
  return {name, dir};
}

// Runs the original on each generated scenario into a fixture folder under `work`.
FixtureRuns run_original_on_scenarios(const CompareOriginalOptions& options,
                                      const std::vector<OriginalScenario>& scenarios,
                                      const fs::path& work, std::FILE* out) {
  FixtureRuns runs;
  for (const auto& s : scenarios) {
    const std::string dir = (work / s.name()).string();
    fmt::print(out, "{}: running em-brain ({} cycles, seed {})...\n", s.name(), options.cycles,
               options.seed);
    std::fflush(out);
    std::vector<std::string> tail;
    const int rc = run_script(
        fmt::format("--em-brain {} --out {} --stream {} --rewards {} --R {} --S {} --M {} "
                    "--cycles {} --seed {} --dt {} --planner {}",
                    shell_quote(options.em_brain), shell_quote(dir), s.stream,
                    s.rewards ? "on" : "off", s.resolution, s.sensory_dim, s.motor_dim,
                    options.cycles, options.seed, kLegacyClockStepS,
                    options.planner == "sync" ? "sync" : "off"),
        out, tail);
    if (rc == 2 && !tail.empty()) throw OriginalFailed(tail.back());  // not a compatible em-brain
    if (rc != 0) throw OriginalFailed(failure("the original failed on " + s.name(), rc, tail));
    runs.emplace_back(s.name(), dir);
  }
  return runs;
}

// Compares a LegacyBrain with each fixture folder and prints the table: 0 when every one
// passes, 1 when one fails, 2 when a folder does not read.
int compare_runs(const FixtureRuns& runs, const CompareOriginalOptions& options, std::FILE* out,
                 std::FILE* err) {
  fmt::print(out, "\nlegacy profile vs the original, tolerance {:.0e} (motors, confidence):\n",
             options.tolerance);
  fmt::print(out, "{:<28} {:>6} {:>12} {:>7} {:>12} {:>8} {}\n", "scenario", "cycles",
             "worst motor", "cycle", "confidence", "regions", "verdict");
  bool all_pass = true;
  for (const auto& [name, dir] : runs) {
    OriginalComparison c;
    try {
      c = compare_with_fixture(
          dir, name, options.tolerance, [&](int64_t k, double d, double dc, bool same) {
            if (!options.per_cycle) return;
            fmt::print(out, "  {} cycle {:>5}  motor {:.3g}  confidence {:.3g}{}\n", name, k, d, dc,
                       same ? "" : "  regions differ");
          });
    } catch (const std::exception& e) {
      fmt::print(err, "fieldbrain compare-original: {}\n", e.what());
      return 2;
    }
    print_row(out, c, options.tolerance);
    all_pass = all_pass && c.pass(options.tolerance);
  }
  fmt::print(out, "{}\n", all_pass ? "PASS" : "FAIL");
  return all_pass ? 0 : 1;
}

}  // namespace

int run_compare_original(const CompareOriginalOptions& options, std::FILE* out, std::FILE* err) {
  // What to run: fixtures given, a recording's inputs, or scenarios of the matrix.
  std::vector<OriginalScenario> scenarios;
  if (const std::string problem = usage_problem(options, scenarios); !problem.empty()) {
    fmt::print(err, "fieldbrain compare-original: {}\n", problem);
    return 2;
  }
  TempDir temp;
  const fs::path work = options.keep.empty() ? temp.path : fs::path(options.keep);
  FixtureRuns runs;
  try {
    fs::create_directories(work);
    if (!options.fixtures.empty()) {
      for (const auto& f : options.fixtures) runs.emplace_back(fs::path(f).filename().string(), f);
    } else if (!options.recording.empty()) {
      runs.push_back(run_original_on_recording(options, work, out));
    } else {
      runs = run_original_on_scenarios(options, scenarios, work, out);
    }
  } catch (const std::exception& e) {
    fmt::print(err, "fieldbrain compare-original: {}\n", e.what());
    return 2;
  }
  return compare_runs(runs, options, out, err);
}

}  // namespace fieldbrain
