#include "app/fieldbrain/replay_command.h"

#include <c10/util/Exception.h>
#include <fmt/core.h>

namespace fieldbrain {

void add_replay_command(CLI::App& app, ReplayCommand& cmd) {
  cmd.sub = app.add_subcommand(
      "replay", "replay a session recorded by fieldbrain-server --record through a fresh brain "
                "and compare the motors (docs/replay.md)");
  cmd.sub->add_option("folder", cmd.folder, "the session's folder (<record dir>/<key>-<time>)")
      ->required();
  cmd.sub->add_option("--field-step", cmd.options.field_step,
                      "reference | fast | script | path.pt (default: as recorded)");
  cmd.sub->add_option("--device", cmd.options.device, "cpu | cuda (default: as recorded)");
  cmd.sub->add_flag("--python", cmd.options.python,
                    "also run the Python reference (scripts/reference/fieldbrain_ref.py replay)");
  cmd.sub->add_option("--tolerance", cmd.options.tolerance,
                      "largest max|motor diff| accepted (default 1e-5 reference, 1e-4 others)");
  cmd.sub->add_flag("--per-cycle", cmd.per_cycle, "print every cycle, not only the summary");
}

int run_replay_command(const ReplayCommand& cmd) {
  try {
    const Recording r = load_recording(cmd.folder);
    fmt::print("replay {}: robot {}, S={} M={}, {} cycles\n", r.folder, r.robot_key, r.sensory_dim,
               r.motor_dim, r.cycles);
    std::fflush(stdout);
    const ReplayReport rep = replay_recording(r, cmd.options, [&](const CycleDiff& d) {
      if (!cmd.per_cycle) return;
      if (d.vs_python >= 0) {
        fmt::print("cycle {:>6}  vs recording {:.3g}  vs python {:.3g}\n", d.cycle, d.vs_recording,
                   d.vs_python);
      } else {
        fmt::print("cycle {:>6}  vs recording {:.3g}\n", d.cycle, d.vs_recording);
      }
    });
    fmt::print("field step {} on {}; max|motor diff| over {} cycles (worst cycle in brackets):\n",
               rep.field_step, rep.device, rep.cycles);
    fmt::print("  this replay vs the recording:      {:.3g} (cycle {})\n", rep.vs_recording.diff,
               rep.vs_recording.cycle);
    if (rep.python_ran) {
      fmt::print("  this replay vs the Python reference: {:.3g} (cycle {})\n", rep.vs_python.diff,
                 rep.vs_python.cycle);
      fmt::print("  Python reference vs the recording:   {:.3g} (cycle {})\n",
                 rep.python_vs_recording.diff, rep.python_vs_recording.cycle);
    }
    fmt::print("tolerance {:.0e}: {}\n", rep.tolerance, rep.ok() ? "PASS" : "FAIL");
    return rep.ok() ? 0 : 1;
  } catch (const c10::Error& e) {  // LibTorch's what() carries a stack trace
    fmt::print(stderr, "fieldbrain replay: {}\n", e.what_without_backtrace());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "fieldbrain replay: {}\n", e.what());
    return 2;
  }
}

}  // namespace fieldbrain
