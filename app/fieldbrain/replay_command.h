// The `fieldbrain replay FOLDER` subcommand: options and the printed report.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "app/fieldbrain/replay.h"

namespace fieldbrain {

struct ReplayCommand {
  std::string folder;
  ReplayOptions options;
  bool per_cycle = false;
  CLI::App* sub = nullptr;
};

// Registers `replay` on `app`; the options land in `cmd`.
void add_replay_command(CLI::App& app, ReplayCommand& cmd);

// Runs it: 0 when every compared max|motor diff| is within the tolerance, 1 when not, 2 when
// the recording cannot be replayed.
int run_replay_command(const ReplayCommand& cmd);

}  // namespace fieldbrain
