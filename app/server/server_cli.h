// fieldbrain-server's command line: --config FILE, then any key overridden by its flag.
#pragma once

#include "app/server/server_config.h"

namespace fieldbrain::server {

struct CliOutcome {
  ServerConfig config;
  bool print_config = false;  // --print-config: show the merged config and exit
  int exit_code = -1;         // >= 0: exit now with this code (--help, a bad flag or config)
};

CliOutcome parse_server_cli(int argc, char** argv);

}  // namespace fieldbrain::server
