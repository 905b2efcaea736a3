// Admissions through the fleet (two FleetGates stand for two servers) against a real etcd.
#include "test/support/catch.h"

#include <atomic>
#include <chrono>
#include <future>

#include "app/server/cluster/fleet_gate.h"
#include "app/server/protocol/handshake.h"
#include "test/cluster/etcd_process.h"

using namespace fieldbrain::server;
using namespace fieldbrain::server::cluster;
using testing::EtcdProcess;
using namespace std::chrono_literals;

namespace {

ClusterConfig fleet(const EtcdProcess& etcd) {
  ClusterConfig c;
  c.name = "test";
  c.etcd = "http://127.0.0.1:" + std::to_string(etcd.client_port());
  c.lease_ttl_s = 3;
  c.renew_every_s = 0.3;
  c.etcd_timeout_s = 0.3;
  return c;
}

RobotPolicy with_tokens() {
  RobotPolicy p;
  p.require_tokens = true;
  p.takeover_after_s = 1;
  return p;
}

IdentityClaim json_claim(const std::string& id, const std::string& token = "", int s = 12,
                         int m = 6) {
  IdentityClaim c;
  c.handshake.identity = id;
  c.handshake.identity_from_client = true;
  c.handshake.json_namespace = true;
  c.handshake.token = token;
  c.handshake.sensory_dim = s;
  c.handshake.motor_dim = m;
  c.key = id;
  return c;
}

FleetAdmission admit(FleetGate& gate, const IdentityClaim& claim) {
  std::promise<FleetAdmission> result;
  gate.admit(claim, [&](FleetAdmission a) { result.set_value(std::move(a)); });
  auto f = result.get_future();
  REQUIRE(f.wait_for(20s) == std::future_status::ready);
  return f.get();
}

}  // namespace

TEST_CASE("A token issued through one server is checked by another", "[cluster][fleet]") {
  EtcdProcess etcd;
  FleetGate a(fleet(etcd), "a", "a:1", with_tokens()), b(fleet(etcd), "b", "b:1", with_tokens());
  std::atomic<int> handovers{0};
  a.set_handlers(nullptr, [&](const std::string& identity) {
    ++handovers;
    a.release(identity);  // the server saves the brain first
  });
  a.start();
  b.start();

  const FleetAdmission first = admit(a, json_claim("r1"));
  REQUIRE(first.ok);
  REQUIRE_FALSE(first.issued_token.empty());
  CHECK_FALSE(first.record.token_sha256.empty());
  // Stored in the fleet before the token is handed out.
  EtcdClient reader(etcd.options());
  REQUIRE(reader.get(a.identity_key("json:r1")));
  CHECK_THAT(reader.get(a.identity_key("json:r1"))->value,
             Catch::Contains(first.record.token_sha256));

  // Through the other server: no token, a wrong one, other sizes: refused, and a keeps the
  // robot (an impostor does not make the owner hand the brain over).
  const FleetAdmission none = admit(b, json_claim("r1"));
  CHECK_FALSE(none.ok);
  CHECK(none.code == kCodeIdentityRefused);
  CHECK(admit(b, json_claim("r1", "0123456789abcdef0123456789abcdef")).code ==
        kCodeIdentityRefused);
  CHECK(admit(b, json_claim("r1", first.issued_token, 24, 4)).code == kCodeDimensionMismatch);
  CHECK(handovers == 0);
  CHECK(a.may_save("json:r1"));

  // The right token: a hands over, b runs the robot, nothing new is issued.
  const FleetAdmission moved = admit(b, json_claim("r1", first.issued_token));
  CHECK(moved.ok);
  CHECK(moved.issued_token.empty());
  CHECK(handovers == 1);
  CHECK(b.may_save("json:r1"));
  CHECK_FALSE(a.may_save("json:r1"));
}

TEST_CASE("Without etcd a handshake is refused with a clear error and nothing is recorded",
          "[cluster][fleet]") {
  EtcdProcess etcd;
  FleetGate a(fleet(etcd), "a", "a:1", with_tokens());
  a.start();
  REQUIRE(a.healthy());
  etcd.pause();
  const FleetAdmission refused = admit(a, json_claim("r2"));
  CHECK_FALSE(refused.ok);
  CHECK(refused.code == kCodeSessionLimit);
  CHECK_THAT(refused.error, Catch::Contains("etcd"));
  CHECK_FALSE(a.may_save("json:r2"));
  etcd.resume();
  EtcdClient reader(etcd.options());
  CHECK_FALSE(reader.get(a.identity_key("json:r2")));
  // And once etcd answers again the same robot is taken.
  const auto end = std::chrono::steady_clock::now() + 10s;
  FleetAdmission later;
  while (std::chrono::steady_clock::now() < end && !(later = admit(a, json_claim("r2"))).ok) {
    std::this_thread::sleep_for(200ms);
  }
  CHECK(later.ok);
}

TEST_CASE("Joining a fleet whose etcd does not answer fails at start naming the endpoint",
          "[cluster][fleet]") {
  ClusterConfig c;
  c.name = "test";
  const uint16_t port = testing::free_port();
  c.etcd = "http://127.0.0.1:" + std::to_string(port);
  c.lease_ttl_s = 3;
  c.renew_every_s = 0.3;
  c.etcd_timeout_s = 0.3;
  FleetGate gate(c, "a", "a:1", RobotPolicy{});
  CHECK_THROWS_WITH(gate.start(), Catch::Contains("127.0.0.1:" + std::to_string(port)));
}
