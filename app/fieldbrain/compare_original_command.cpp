#include "app/fieldbrain/compare_original_command.h"

#include <cstdio>

namespace fieldbrain {

void add_compare_original_command(CLI::App& app, CompareOriginalCommand& cmd) {
  CompareOriginalOptions& o = cmd.options;
  cmd.sub = app.add_subcommand(
      "compare-original",
      "run your em-brain checkout (pinned) and the legacy profile on the same inputs and compare "
      "them cycle by cycle (docs/legacy.md)");
  cmd.sub->add_option("--em-brain", o.em_brain, "your em-brain checkout (commit ef2bdb8)");
  cmd.sub->add_option("--scenarios", o.scenarios,
                      "all, or names like r16_s24m4_smooth r32_s12m6_negative_reward (default: "
                      "r16_s24m4_smooth r16_s12m6_negative_reward r32_s24m4_random_reward)");
  cmd.sub->add_option("--recording", o.recording,
                      "a session recorded by fieldbrain-server --record: its inputs instead of "
                      "generated streams (docs/replay.md)");
  cmd.sub->add_option("--fixture", o.fixtures,
                      "fixture folders run_original.py already wrote (test/fixtures/legacy/*): "
                      "no Python is run, --em-brain is not needed");
  cmd.sub->add_option("--cycles", o.cycles, "cycles per scenario (default 300)");
  cmd.sub->add_option("--seed", o.seed, "seed of the generated scenarios (default 42)");
  cmd.sub->add_option("--tolerance", o.tolerance,
                      "largest |motor| and |confidence| difference accepted (default 1e-5)");
  cmd.sub->add_option("--keep", o.keep, "keep the original's fixture folders here");
  cmd.sub->add_flag("--per-cycle", o.per_cycle, "print every cycle's differences");
  cmd.sub->add_option("--planner", o.planner,
                      "the strategic planner in generated scenarios: off (default) or sync "
                      "(discovery on the cycle's thread, both sides; async is not reproducible)")
      ->check(CLI::IsMember({"off", "sync"}));
}

int run_compare_original_command(const CompareOriginalCommand& cmd) {
  return run_compare_original(cmd.options, stdout, stderr);
}

}  // namespace fieldbrain
