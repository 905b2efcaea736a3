// An in-process server over the real field brain (the *_brain_test.cpp suites), built from a
// config and stopped at the end of the test.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>

#include "app/server/session/server.h"
#include "app/server/engine/torch_brain_engine.h"

namespace fieldbrain::server::testing {

struct RealBrainServer {
  explicit RealBrainServer(const ServerConfig& c) {
    spdlog::set_level(spdlog::level::off);
    engine = make_field_brain_engine(c.brain);
    server = std::make_unique<Server>(c, *engine);
    server->start();
  }
  ~RealBrainServer() { server->stop(); }
  std::unique_ptr<BrainEngine> engine;
  std::unique_ptr<Server> server;
};

}  // namespace fieldbrain::server::testing
