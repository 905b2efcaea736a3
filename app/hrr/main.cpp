// fieldbrain-hrr: command-line tools around the HRR library (hrr/README.md).
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

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
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    std::cerr << "fieldbrain-hrr: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
