// The capability vector of docs/protocol.md, legacy §2.1 and the replies of §2.2-2.3.
#include "app/server/protocol/handshake.h"

#include "test/support/catch.h"
#include <cmath>
#include <limits>

using namespace fieldbrain::server;

namespace {
Capabilities ok(const std::vector<float>& v) {
  auto p = parse_capabilities(v, HandshakeLimits{});
  REQUIRE(std::holds_alternative<Capabilities>(p));
  return std::get<Capabilities>(p);
}
bool refused(const std::vector<float>& v) {
  return std::holds_alternative<std::string>(parse_capabilities(v, HandshakeLimits{}));
}
}  // namespace

TEST_CASE("the real clients' capability vectors parse", "[server]") {
  auto picarx = ok({1, 12, 6, 1, 3, 640, 480});
  CHECK(picarx.sensory_dim == 12);
  CHECK(picarx.motor_dim == 6);
  CHECK(picarx.capability_mask == 3);
  CHECK(profile_key(picarx) == "picarx_12s_6m");
  CHECK(profile_key(ok({1, 24, 4, 1, 1})) == "picarx_24s_4m");
  auto demo = ok({1, 16, 4, 1});
  CHECK(demo.capability_mask == 0);
  CHECK(profile_key(ok({1, 16, 4, 2, 0})) == "generic_16s_4m");
  CHECK(profile_key(ok({1, 16, 4, 0, 0})) == "unknown_16s_4m");
}

TEST_CASE("missing elements take the legacy defaults and sizes truncate", "[server]") {
  auto empty = ok({});
  CHECK(empty.sensory_dim == 16);
  CHECK(empty.motor_dim == 4);
  CHECK(ok({1, 12.7f, 6.9f}).sensory_dim == 12);
  CHECK(ok({1, 12.7f, 6.9f}).motor_dim == 6);
  CHECK(ok({1, 8, 2, 1, 0, 1, 2, 3, 4}).sensory_dim == 8);  // extras ignored
}

TEST_CASE("non-finite or absurd sizes are refused", "[server]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(refused({1, nan, 4}));
  CHECK(refused({1, 16, inf}));
  CHECK(refused({1, 16, 4, 1, nan}));
  CHECK(refused({1, 1e9f, 4}));
  CHECK(refused({1, -3, 4}));
  CHECK(refused({1, 0, 4}));
  CHECK(refused({1, 16, 1025}));
  CHECK_FALSE(refused({1, 1024, 1024}));
  CHECK_FALSE(refused({1, 16, 4, nan}));  // hardware type NaN is just "unknown"
}

TEST_CASE("handshake replies follow the client's generation", "[server]") {
  auto caps = ok({1, 24, 4, 1, 1});
  CHECK(handshake_reply(Framing::A, caps, false, 8) == std::vector<float>{1, 4, 24, 4, 1});
  CHECK(handshake_reply(Framing::B, caps, false, 8) == std::vector<float>{1, 24, 4, 0, 8});
  CHECK(handshake_reply(Framing::C, caps, true, 8) == std::vector<float>{1, 24, 4, 1, 8});
  CHECK(handshake_error_reply(2001) == std::vector<float>{-1, 2001, 1, 0, 0});
  CHECK(error_category(3001) == 2);
  CHECK(std::string(error_code_name(2001)) == "INVALID_CAPABILITIES");
}
