// The BrainEngine over fieldbrain::BrainGroup: the robots of one (S, M) live as rows of one
// resident group (create claims a row, destroy releases it, adopt claims one filled from the
// brain the loader thread built); a tick steps the ready rows of the group in one batch. The header is torch-free so
// the server and its tests need no LibTorch headers; only torch_brain_engine.cpp includes it.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>

#include "app/server/worker/brain_engine.h"

namespace fieldbrain::server {

// `brain_config` is the "brain" object of the server config (fieldbrain::BrainConfig keys;
// unknown keys refused). Its sensory_dim/motor_dim are replaced by each robot's handshake.
// "profile": "legacy" gives the legacy profile's engine (legacy_brain_engine.h) instead.
// Throws std::invalid_argument when the config does not parse or validate.
std::unique_ptr<BrainEngine> make_field_brain_engine(const nlohmann::json& brain_config);

}  // namespace fieldbrain::server
