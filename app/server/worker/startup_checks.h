// Fail fast on bad configuration: the checks main() runs after parsing the config and before
// any port opens, so a server that cannot do its job stops at start-up with a message naming
// the key, instead of serving and then refusing every robot or losing every save.
#pragma once

#include <cstdint>
#include <string>

#include "app/server/worker/brain_engine.h"
#include "app/server/config/server_config.h"

namespace fieldbrain::server {

// state_dir exists (created if missing) and takes a written, fsync'd and removed probe file;
// logs its free space. Empty state_dir (persistence off) is allowed and logged. Returns the
// free bytes (0 when off). Throws std::runtime_error naming "state_dir".
uint64_t check_state_dir(const std::string& state_dir);

// "<state_dir>/identities.json", when present, reads (valid JSON, sizes in range): a damaged
// file is a start-up refusal (exit 2) like any other. Throws std::runtime_error naming
// "state_dir" and the file.
void check_identities(const std::string& state_dir);

// A trial brain of the config's default sizes is made, stepped once and destroyed, which
// loads the field step and touches the device: an unloadable field_step or a CUDA device
// without CUDA is refused here. Throws std::runtime_error naming the brain key.
void check_brain(BrainEngine& engine, const nlohmann::json& brain);

// Every check above, in order.
void run_startup_checks(const ServerConfig& config, BrainEngine& engine);

}  // namespace fieldbrain::server
