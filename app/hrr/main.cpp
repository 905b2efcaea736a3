// fieldbrain-hrr: command-line tools around the HRR library (hrr/README.md).
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <stdexcept>

#include "app/cli/command_line.h"
#include "app/hrr/commands.h"
#include "app/version/version.h"

int main(int argc, char** argv) {
  CLI::App app{"fieldbrain-hrr: holographic reduced representations on LibTorch"};
  app.set_version_flag("--version", fieldbrain::version_line("fieldbrain-hrr"));
  app.require_subcommand(1);
  fieldbrain::hrr::cli::add_capacity_command(app);
  fieldbrain::hrr::cli::add_bench_command(app);
  fieldbrain::hrr::cli::add_vector_command(app);
  try {
    // The subcommands run inside the parse (their callbacks): 0 after --help/--version, 2 after
    // a usage error, as every program (app/cli/command_line.h).
    if (const auto status = fieldbrain::cli::parse(app, argc, argv)) return *status;
  } catch (const std::invalid_argument& error) {  // a subcommand refusing its options
    return fieldbrain::cli::config_error(app, error.what());
  } catch (const std::exception& error) {
    std::cerr << "fieldbrain-hrr: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
