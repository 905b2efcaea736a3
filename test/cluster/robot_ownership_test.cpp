// Robot ownership across servers (two RobotOwnership objects stand for two servers) against a
// real etcd.
#include "test/support/catch.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "app/server/cluster/robot_ownership.h"
#include "test/cluster/etcd_process.h"

using namespace fieldbrain::server::cluster;
using testing::EtcdProcess;
using namespace std::chrono_literals;

namespace {

OwnershipOptions server(const std::string& id) {
  OwnershipOptions o;
  o.cluster = "test";
  o.server_id = id;
  o.address = id + ":9999";
  o.lease_ttl_s = 3;
  o.renew_every = 300ms;
  o.safety_margin = 700ms;
  return o;
}

template <typename Pred>
bool within(std::chrono::milliseconds limit, Pred pred) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return pred();
}

}  // namespace

TEST_CASE("A robot one server holds is reported as held elsewhere to another, and freed by a "
          "release",
          "[cluster][ownership]") {
  EtcdProcess etcd;
  EtcdClient client_a(etcd.options()), client_b(etcd.options());
  RobotOwnership a(client_a, server("a")), b(client_b, server("b"));
  a.start();
  b.start();
  REQUIRE(a.claim("json:r1").outcome == ClaimOutcome::Owned);
  CHECK(a.claim("json:r1").outcome == ClaimOutcome::Owned);  // again: still this server's
  const ClaimResult other = b.claim("json:r1");
  CHECK(other.outcome == ClaimOutcome::OwnedElsewhere);
  CHECK(other.owner == "a");
  CHECK(a.holds("json:r1"));
  CHECK_FALSE(b.holds("json:r1"));
  REQUIRE(client_a.get(a.server_key()));
  CHECK(client_a.get(a.server_key())->value == "a:9999");

  a.release("json:r1");
  CHECK_FALSE(a.holds("json:r1"));
  CHECK(b.claim("json:r1").outcome == ClaimOutcome::Owned);
}

TEST_CASE("A server asked for a robot hands it over and the asking server then holds it",
          "[cluster][ownership]") {
  EtcdProcess etcd;
  EtcdClient client_a(etcd.options()), client_b(etcd.options());
  RobotOwnership a(client_a, server("a")), b(client_b, server("b"));
  std::atomic<int> asked{0};
  std::string requester;
  std::mutex m;
  a.on_takeover([&](const std::string& identity, const std::string& by) {
    {
      std::lock_guard<std::mutex> lock(m);
      requester = by;
    }
    ++asked;
    a.release(identity);  // the server saves the brain first
  });
  a.start();
  b.start();
  REQUIRE(a.claim("json:r1").outcome == ClaimOutcome::Owned);
  const auto t0 = std::chrono::steady_clock::now();
  const ClaimResult r = b.acquire("json:r1", 3000ms);
  CHECK(r.outcome == ClaimOutcome::Owned);
  CHECK(std::chrono::steady_clock::now() - t0 < 2s);  // about one renewal period
  CHECK(asked == 1);
  {
    std::lock_guard<std::mutex> lock(m);
    CHECK(requester == "b");
  }
  CHECK(b.holds("json:r1"));
  CHECK_FALSE(a.holds("json:r1"));
  CHECK_FALSE(client_b.get(b.takeover_key("json:r1")));  // the request is cleared
}

TEST_CASE("A server that does not hand a robot over within the wait leaves the asker refused, "
          "with the owner named",
          "[cluster][ownership]") {
  EtcdProcess etcd;
  EtcdClient client_a(etcd.options()), client_b(etcd.options());
  RobotOwnership a(client_a, server("a")), b(client_b, server("b"));
  a.start();
  b.start();  // a has no takeover handler: it never lets go
  REQUIRE(a.claim("json:r1").outcome == ClaimOutcome::Owned);
  const ClaimResult r = b.acquire("json:r1", 800ms);
  CHECK(r.outcome == ClaimOutcome::OwnedElsewhere);
  CHECK_THAT(r.error, Catch::Contains("server a"));
  CHECK(a.holds("json:r1"));
}

TEST_CASE("A stopped server's robots are free at once for the others", "[cluster][ownership]") {
  EtcdProcess etcd;
  EtcdClient client_a(etcd.options()), client_b(etcd.options());
  RobotOwnership b(client_b, server("b"));
  b.start();
  {
    RobotOwnership a(client_a, server("a"));
    a.start();
    REQUIRE(a.claim("json:r1").outcome == ClaimOutcome::Owned);
    REQUIRE(a.claim("bin:k") .outcome == ClaimOutcome::Owned);
  }  // stop(): the lease is revoked
  CHECK(b.claim("json:r1").outcome == ClaimOutcome::Owned);
  CHECK(b.claim("bin:k").outcome == ClaimOutcome::Owned);
}

TEST_CASE("Without etcd a server keeps its robots while its lease is trustworthy, then gives "
          "them all up, refuses new ones, and recovers when etcd returns",
          "[cluster][ownership]") {
  EtcdProcess etcd;
  EtcdClient client(etcd.options(300ms));
  RobotOwnership a(client, server("a"));
  std::atomic<int> lost_calls{0};
  std::atomic<size_t> lost_count{0};
  a.on_lost([&](const std::vector<std::string>& ids) {
    lost_count = ids.size();
    ++lost_calls;
  });
  a.start();
  REQUIRE(a.claim("json:r1").outcome == ClaimOutcome::Owned);
  REQUIRE(a.claim("json:r2").outcome == ClaimOutcome::Owned);

  etcd.kill();
  const auto down = std::chrono::steady_clock::now();
  const ClaimResult refused = a.claim("json:r3");
  CHECK(refused.outcome == ClaimOutcome::Unavailable);
  CHECK_THAT(refused.error, Catch::Contains("etcd"));
  CHECK(a.holds("json:r1"));  // still within the lease
  // Lost no later than the TTL (3 s) less the margin after the last renewal.
  REQUIRE(within(4000ms, [&] { return lost_calls.load() == 1; }));
  CHECK(std::chrono::steady_clock::now() - down < 3s);
  CHECK(lost_count == 2);
  CHECK_FALSE(a.holds("json:r1"));
  CHECK_FALSE(a.lease_valid());
  CHECK(a.claim("json:r1").outcome == ClaimOutcome::Unavailable);

  etcd.start();
  REQUIRE(within(5000ms, [&] { return a.lease_valid(); }));
  // The old lease may have survived etcd's restart; this server's stale key does not block it.
  CHECK(a.claim("json:r1").outcome == ClaimOutcome::Owned);
  CHECK(lost_calls == 1);
}

TEST_CASE("A server whose lease etcd let expire gives its robots up and another server takes "
          "them",
          "[cluster][ownership]") {
  EtcdProcess etcd;
  EtcdClient client_a(etcd.options(300ms)), client_b(etcd.options());
  RobotOwnership a(client_a, server("a")), b(client_b, server("b"));
  std::atomic<int> lost_calls{0};
  a.on_lost([&](const std::vector<std::string>&) { ++lost_calls; });
  a.start();
  b.start();
  REQUIRE(a.claim("json:r1").outcome == ClaimOutcome::Owned);
  // What a server frozen past its TTL finds on waking: etcd revoked the lease meanwhile.
  client_b.revoke(client_a.get(a.robot_key("json:r1"))->lease);
  CHECK(b.claim("json:r1").outcome == ClaimOutcome::Owned);
  REQUIRE(within(2000ms, [&] { return lost_calls.load() == 1; }));
  CHECK_FALSE(a.holds("json:r1"));
  CHECK(b.holds("json:r1"));
  // a takes new robots again on a fresh lease, but not b's.
  REQUIRE(within(2000ms, [&] { return a.lease_valid(); }));
  CHECK(a.claim("json:r1").outcome == ClaimOutcome::OwnedElsewhere);
}
