// The subcommands of fieldbrain-hrr; each registers its options on the CLI11 app and runs
// when selected. Kept apart so main.cpp only wires them together.
#pragma once

#include <CLI/CLI.hpp>

namespace fieldbrain::hrr::cli {

void add_capacity_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_vector_command(CLI::App& app);

}  // namespace fieldbrain::hrr::cli
