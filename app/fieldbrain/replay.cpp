#include "app/fieldbrain/replay.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include <fmt/core.h>
#include <torch/torch.h>

#include "brain/brain_config.h"
#include "brain/field_brain.h"
#include "brain/legacy/legacy_profile.h"

namespace fieldbrain {

namespace fs = std::filesystem;

namespace {

double max_abs_diff(const float* a, const float* b, int64_t n) {
  double d = 0;
  for (int64_t i = 0; i < n; ++i) d = std::max(d, double(std::abs(a[i] - b[i])));
  return d;
}

// The Python reference's motors [N,M] on the recording's inputs.
std::vector<float> python_motors(const Recording& r) {
  const fs::path out = fs::temp_directory_path() /
                       fmt::format("fieldbrain-replay-{}-{}.npy", getpid(), r.cycles);
  const std::string cmd =
      fmt::format("{} {}/scripts/reference/fieldbrain_ref.py replay '{}' --out '{}' 2>&1",
                  FIELDBRAIN_PYTHON, FIELDBRAIN_SOURCE_DIR, r.folder, out.string());
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + cmd);
  std::string output;
  char buf[512];
  while (fgets(buf, sizeof buf, pipe) != nullptr) output += buf;
  const int status = pclose(pipe);
  if (status != 0 || !fs::exists(out)) {
    throw std::runtime_error("the Python reference failed (" + cmd + "):\n" + output);
  }
  NpyArray a = read_npy_f32(out.string());
  fs::remove(out);
  if (a.shape.size() != 2 || a.shape[0] != r.cycles || a.shape[1] != r.motor_dim) {
    throw std::runtime_error("the Python reference returned motors of the wrong shape");
  }
  return std::move(a.values);
}

}  // namespace

bool ReplayReport::ok() const {
  if (vs_recording.diff > tolerance) return false;
  if (python_ran && (vs_python.diff > tolerance || python_vs_recording.diff > tolerance)) return false;
  return true;
}

ReplayReport replay_recording(const Recording& r, const ReplayOptions& options,
                              const std::function<void(const CycleDiff&)>& on_cycle) {
  if (r.start_cycle != 0) {
    throw std::runtime_error(fmt::format(
        "{}: the robot resumed a saved brain at cycle {}; a fresh brain cannot replay it "
        "(record with an empty state dir, or delete the robot's state file)",
        r.folder, r.start_cycle));
  }
  if (r.dropped != 0) {
    throw std::runtime_error(fmt::format("{}: {} cycles were dropped while recording", r.folder,
                                         r.dropped));
  }
  const int64_t S = r.sensory_dim, M = r.motor_dim;
  if (r.cycles < 0 || S < 1 || M < 1 || r.sensors.size() != size_t(r.cycles * S) ||
      r.reward.size() != size_t(r.cycles) || r.motors.size() != size_t(r.cycles * M)) {
    throw std::runtime_error(fmt::format("{}: the arrays do not hold {} cycles of S = {}, M = {}",
                                         r.folder, r.cycles, S, M));
  }
  const bool legacy = r.brain.profile == BrainProfile::Legacy;
  if (legacy && (options.python || !options.field_step.empty() ||
                 (!options.device.empty() && options.device != "cpu"))) {
    throw std::runtime_error(fmt::format(
        "{}: a legacy-profile session replays through the legacy brain only (no --python, "
        "--field-step or GPU); `fieldbrain compare-original --recording` runs the original on it",
        r.folder));
  }
  const BrainConfig config = replay_brain_config(r, options.field_step, options.device);
  ReplayReport report;
  report.cycles = r.cycles;
  report.field_step = legacy ? std::string("legacy profile") : config.field_step;
  report.device = config.device;
  report.tolerance = options.tolerance >= 0
                         ? options.tolerance
                         : (legacy || config.field_step_impl() == FieldStepImpl::Aten ? 1e-5 : 1e-4);

  std::vector<float> py;
  if (options.python) {
    py = python_motors(r);
    report.python_ran = true;
  }
  if (legacy) {
    // The robot's legacy brain as the server built it (brain/legacy/legacy_profile.h), on the
    // fixed clock (a session served on the wall clock cannot be replayed exactly).
    BrainConfig sized = config;
    sized.sensory_dim = S;
    sized.motor_dim = M;
    legacy::LegacyBrain brain(legacy_options(sized, legacy_robot_seed(config.seed, r.key_hash)));
    std::vector<float> m(static_cast<size_t>(M));
    for (int64_t i = 0; i < r.cycles; ++i) {
      const auto list =
          legacy_input_list(r.sensors.data() + i * S, S, r.reward[size_t(i)], config.legacy.reward);
      const auto out = brain->step(list, legacy_clock_seconds(LegacyClock::Fixed, i));
      for (int64_t j = 0; j < M; ++j) m[size_t(j)] = static_cast<float>(out[size_t(j)]);
      CycleDiff d;
      d.cycle = i;
      d.vs_recording = max_abs_diff(m.data(), r.motors.data() + i * M, M);
      report.vs_recording.take(d.vs_recording, i);
      if (on_cycle) on_cycle(d);
    }
    return report;
  }
  // A brain the recording describes but this machine cannot build (no CUDA, a field_step file
  // that does not load, memory): say so in one line, without LibTorch's stack trace.
  const auto refuse_brain = [&](const std::string& why) {
    return std::runtime_error(
        fmt::format("{}/session.json: \"brain\" (resolution {}, "
                    "attractor_capacity {}, field_step \"{}\", device "
                    "\"{}\"): {}",
                    r.folder, config.resolution, config.attractor_capacity, config.field_step,
                    config.device, why));
  };
  FieldBrain brain{nullptr};
  try {
    brain = FieldBrain(config, std::vector<uint64_t>{r.key_hash});
  } catch (const c10::Error& e) {
    throw refuse_brain(e.what_without_backtrace());
  } catch (const std::bad_alloc&) {
    throw refuse_brain("out of memory");
  } catch (const std::invalid_argument& e) {
    throw refuse_brain(e.what());
  }
  auto sensors = torch::empty({1, S});
  auto reward = torch::empty({1});
  for (int64_t i = 0; i < r.cycles; ++i) {
    std::copy(r.sensors.begin() + i * S, r.sensors.begin() + (i + 1) * S, sensors.data_ptr<float>());
    reward.data_ptr<float>()[0] = r.reward[size_t(i)];
    const torch::Tensor motors = brain->step(sensors, reward).contiguous();
    const float* m = motors.data_ptr<float>();
    CycleDiff d;
    d.cycle = i;
    d.vs_recording = max_abs_diff(m, r.motors.data() + i * M, M);
    report.vs_recording.take(d.vs_recording, i);
    if (report.python_ran) {
      d.vs_python = max_abs_diff(m, py.data() + i * M, M);
      report.vs_python.take(d.vs_python, i);
      report.python_vs_recording.take(max_abs_diff(py.data() + i * M, r.motors.data() + i * M, M), i);
    }
    if (on_cycle) on_cycle(d);
  }
  return report;
}

}  // namespace fieldbrain
