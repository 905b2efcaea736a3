// What every program's command line shares (fieldbrain, fieldbrain-server, -sim, -bench, -hrr,
// -soak): CLI11 parses, and this decides how a program ends when the command line or its
// configuration is wrong, so they all agree (docs/operating.md "Exit codes"):
//   0  --help, --version;
//   2  a usage or configuration error: an unknown or malformed flag, a value out of range, a
//      missing subcommand, a config file or key that cannot be used. The message goes to
//      stderr prefixed with the program's name, and an unknown argument gets the nearest flag
//      or subcommand ("unknown argument --resolutoin; did you mean --resolution?").
// CLI11's own exit codes (105, 106, 109, ...) never leak out.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fieldbrain::cli {

// The exit status of a usage or configuration error, for every program.
constexpr int kUsageError = 2;

// Parses argv into `app`. Returns std::nullopt when the program should go on, otherwise the
// status to exit with: 0 after --help or --version (printed on stdout), kUsageError after a
// parse error (explained on stderr). Exceptions other than CLI11's (a subcommand callback
// throwing) pass through.
std::optional<int> parse(CLI::App& app, int argc, const char* const* argv);

// Reports a configuration error found after parsing ("<program>: <message>" on stderr) and
// returns kUsageError, so `return cli::config_error(app, e.what());` ends the program.
int config_error(const CLI::App& app, std::string_view message);

// The option (--name, -c) or subcommand of `app` and its selected subcommands nearest to
// `unknown` (a misspelt flag, a flag written without its dashes, a prefix); "" when none is
// near enough to be a likely meaning. `--flag=value` is judged by its flag.
std::string nearest_argument(const CLI::App& app, const std::string& unknown);

// The edit distance of a and b counting a swap of two neighbours as one edit (optimal string
// alignment), the usual measure of typing mistakes.
size_t typo_distance(std::string_view a, std::string_view b);

}  // namespace fieldbrain::cli
