#include "app/cli/command_line.h"

#include <algorithm>
#include <iostream>

namespace fieldbrain::cli {
namespace {

std::string basename_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// CLI11 names an app after argv[0] (a path) once it parsed; the message wants the name alone.
std::string program_name(const CLI::App& app) {
  const std::string name = basename_of(app.get_name());
  return name.empty() ? "fieldbrain" : name;
}

std::string_view without_dashes(std::string_view s) {
  while (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return s;
}

// Every name the user could have meant: the options of `app` and of the subcommands given
// (--help included), and the names of its subcommands.
void collect_names(const CLI::App& app, std::vector<std::string>& out) {
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& l : option->get_lnames()) out.push_back("--" + l);
    for (const std::string& s : option->get_snames()) out.push_back("-" + s);
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    out.push_back(sub->get_name());
  }
  for (const CLI::App* sub : app.get_subcommands()) collect_names(*sub, out);
}

}  // namespace

size_t typo_distance(std::string_view a, std::string_view b) {
  // Three rows of the optimal-string-alignment table are all a transposition looks back at.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[b.size()];
}

std::string nearest_argument(const CLI::App& app, const std::string& unknown) {
  const std::string_view asked = without_dashes(
      std::string_view(unknown).substr(0, std::min(unknown.size(), unknown.find('='))));
  if (asked.size() < 2) return "";  // -x: any one letter is one edit from every other
  std::vector<std::string> names;
  collect_names(app, names);
  // About one typing mistake in three letters is still recognisable (--resolutoin, --robtos);
  // more and the suggestion would be a guess.
  const size_t allowed = std::max<size_t>(1, std::min<size_t>(3, asked.size() / 3));
  std::string best;
  size_t best_distance = allowed + 1;
  for (const std::string& name : names) {
    const std::string_view candidate = without_dashes(name);
    if (candidate.size() < 2 && asked.size() > 1) continue;  // -c is nobody's typo of --cycles
    size_t d = typo_distance(asked, candidate);
    // A prefix (--res) is as good as one typo: the user stopped typing, not mistyped.
    if (d > 0 && asked.size() >= 3 && candidate.substr(0, asked.size()) == asked) d = 1;
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  // The name itself, given as written (e.g. a flag CLI11 refused in this position), is no
  // suggestion.
  return best == unknown ? "" : best;
}

std::optional<int> parse(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) {
      return app.exit(e);  // --help, --version: printed on stdout, status 0
    }
    const std::string name = program_name(app);
    // An argument CLI11 did not take is usually the cause, even when another error was found
    // first (a required option "missing" because it was misspelt).
    const std::vector<std::string> extras = app.remaining(/*recurse=*/true);
    std::string unknown;
    if (!extras.empty()) {
      const std::string suggestion = nearest_argument(app, extras.front());
      unknown = "unknown argument " + extras.front();
      if (!suggestion.empty()) unknown += "; did you mean " + suggestion + "?";
    }
    if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr || unknown.empty()) {
      std::cerr << name << ": " << e.what() << "\n";
    }
    if (!unknown.empty()) std::cerr << name << ": " << unknown << "\n";
    std::cerr << "Run with --help for more information.\n";
    return kUsageError;
  }
}

int config_error(const CLI::App& app, std::string_view message) {
  std::cerr << program_name(app) << ": " << message << "\n";
  return kUsageError;
}

}  // namespace fieldbrain::cli
