// The `fieldbrain compare-original` subcommand: its options (docs/legacy.md "Check it").
#pragma once

#include <CLI/CLI.hpp>

#include "app/fieldbrain/compare_original.h"

namespace fieldbrain {

struct CompareOriginalCommand {
  CompareOriginalOptions options;
  CLI::App* sub = nullptr;
};

// Registers `compare-original` on `app`; the options land in `cmd`.
void add_compare_original_command(CLI::App& app, CompareOriginalCommand& cmd);

// Runs it: 0 when every scenario passes, 1 when one fails, 2 on bad usage or when the original
// cannot be run (PATH not a compatible em-brain).
int run_compare_original_command(const CompareOriginalCommand& cmd);

}  // namespace fieldbrain
