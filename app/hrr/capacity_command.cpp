// `capacity --dim D --items M`: the measured capacity curve (pairs k vs clean-up accuracy),
// with the k reaching 99 % / 90 % and the §3.5 rules of thumb for comparison.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "app/hrr/commands.h"
#include "hrr/capacity.h"

namespace fieldbrain::hrr::cli {
namespace {

void print_curve(const CapacityOptions& options, const std::vector<CapacityPoint>& curve) {
  std::printf(
      "clean-up capacity: D=%lld, M=%lld candidates, %lld traces per k, %s roles, "
      "seed %llu\n",
      static_cast<long long>(options.dim), static_cast<long long>(options.candidates),
      static_cast<long long>(options.trials), options.unitary_roles ? "unitary" : "Gaussian",
      static_cast<unsigned long long>(options.seed));
  std::printf("%6s  %9s  %8s  %8s  %s\n", "pairs", "accuracy", "+-se", "queries", "");
  for (const CapacityPoint& p : curve) {
    const int bar = static_cast<int>(p.accuracy() * 40.0 + 0.5);
    std::printf("%6lld  %9.4f  %8.4f  %8lld  %s\n", static_cast<long long>(p.pairs), p.accuracy(),
                p.standard_error(), static_cast<long long>(p.queries),
                std::string(static_cast<std::size_t>(bar), '#').c_str());
  }
  std::printf("largest k with accuracy >= 99%%: %lld   (rule of thumb D/(3.5 ln M + 9) = %.1f)\n",
              static_cast<long long>(capacity_at(curve, 0.99)),
              predicted_capacity_99(options.dim, options.candidates));
  std::printf("largest k with accuracy >= 90%%: %lld   (rule of thumb D/(2.7 ln M + 3) = %.1f)\n",
              static_cast<long long>(capacity_at(curve, 0.90)),
              predicted_capacity_90(options.dim, options.candidates));
}

}  // namespace

void add_capacity_command(CLI::App& app) {
  auto options = std::make_shared<CapacityOptions>();
  CLI::App* cmd = app.add_subcommand(
      "capacity", "Measure pairs-per-trace vs clean-up accuracy (docs/hrr.md)");
  cmd->add_option("--dim", options->dim, "dimension D")
      ->required()
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 20));
  cmd->add_option("--items", options->candidates, "number of clean-up candidates M")
      ->required()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 22));
  cmd->add_option("--trials", options->trials, "traces per k (queries = trials * k)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--pairs", options->pair_counts, "the k values to measure")
      ->capture_default_str()
      ->delimiter(',');
  cmd->add_option("--seed", options->seed, "random seed")->capture_default_str();
  cmd->add_flag("--unitary", options->unitary_roles, "unitary roles instead of Gaussian");
  cmd->callback([options]() {
    const auto curve = measure_capacity(*options, [](std::size_t done, std::size_t total) {
      std::fprintf(stderr, "\r  measuring k values: %zu/%zu", done, total);
    });
    std::fprintf(stderr, "\n");
    print_curve(*options, curve);
  });
}

}  // namespace fieldbrain::hrr::cli
