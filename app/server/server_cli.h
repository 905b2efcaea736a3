// fieldbrain-server's command line: --config FILE, then any key overridden by its flag or by
// --set KEY=VALUE (every key, nested ones as robots.takeover_after_s or brain.seed).
#pragma once

#include "app/server/config/server_config.h"

namespace fieldbrain::server {

struct CliOutcome {
  ServerConfig config;
  std::string config_path;    // --config, "" when none
  std::string ready_file;     // --ready-file: where the ready line is also written
  bool print_config = false;  // --print-config: show the merged config and exit
  int exit_code = -1;         // >= 0: exit now with this code (--help, a bad flag or config)
};

CliOutcome parse_server_cli(int argc, char** argv);

// Applies one --set: "a.b=VALUE" sets j["a"]["b"]. VALUE is read as JSON (5, true, [1],
// "x") and otherwise taken as a string (--set log_level=debug). Throws std::invalid_argument
// naming the argument when it has no '=' or an empty key.
void apply_set(nlohmann::json& j, const std::string& assignment);

}  // namespace fieldbrain::server
