// The etcd client against a real etcd (etcd_process.h).
#include "test/support/catch.h"

#include <chrono>

#include "app/server/cluster/etcd_client.h"
#include "test/cluster/etcd_process.h"

using namespace fieldbrain::server::cluster;
using testing::EtcdProcess;
using namespace std::chrono_literals;

TEST_CASE("An etcd endpoint list is read with or without the scheme, and a bad item is named",
          "[cluster][etcd]") {
  const auto list = parse_etcd_endpoints("http://127.0.0.1:2379, 10.0.0.2:23790/");
  REQUIRE(list.size() == 2);
  CHECK(list[0].host == "127.0.0.1");
  CHECK(list[0].port == 2379);
  CHECK(list[1].host == " 10.0.0.2");  // kept as written: the resolver names it in its error
  CHECK(list[1].port == 23790);
  CHECK_THROWS_WITH(parse_etcd_endpoints("http://a:2379,https://b:2379"),
                    Catch::Contains("https://b:2379"));
  CHECK_THROWS_WITH(parse_etcd_endpoints("a:99999"), Catch::Contains("a:99999"));
  CHECK_THROWS_WITH(parse_etcd_endpoints("a"), Catch::Contains("\"a\""));
  CHECK_THROWS(parse_etcd_endpoints(""));
}

TEST_CASE("A key created under a lease is refused to a second creator, who learns its holder",
          "[cluster][etcd]") {
  EtcdProcess etcd;
  EtcdClient client(etcd.options());
  const int64_t lease = client.grant(5);
  CHECK(lease != 0);
  const CreateResult first = client.create("/t/robots/r1", "server-a", lease);
  CHECK(first.created);
  const CreateResult second = client.create("/t/robots/r1", "server-b", 0);
  CHECK_FALSE(second.created);
  REQUIRE(second.current);
  CHECK(second.current->value == "server-a");
  CHECK(second.current->lease == lease);
  // Binary-safe: keys and values travel base64-encoded.
  const std::string odd("a\0b\xff=\"/", 7);
  CHECK(client.create("/t/odd", odd, 0).created);
  REQUIRE(client.get("/t/odd"));
  CHECK(client.get("/t/odd")->value == odd);
  CHECK_FALSE(client.get("/t/absent"));
}

TEST_CASE("Revoking a lease removes its keys, and keeping it alive afterwards reports 0",
          "[cluster][etcd]") {
  EtcdProcess etcd;
  EtcdClient client(etcd.options());
  const int64_t lease = client.grant(5);
  client.put("/t/a", "1", lease);
  client.put("/t/b", "2", 0);
  CHECK(client.keep_alive(lease) >= 5);
  client.revoke(lease);
  CHECK_FALSE(client.get("/t/a"));
  CHECK(client.get("/t/b"));
  CHECK(client.keep_alive(lease) == 0);
}

TEST_CASE("A conditional delete removes a key only while it holds the given value",
          "[cluster][etcd]") {
  EtcdProcess etcd;
  EtcdClient client(etcd.options());
  client.put("/t/robots/r1", "server-b");
  CHECK_FALSE(client.remove_if("/t/robots/r1", "server-a"));
  CHECK(client.get("/t/robots/r1"));
  CHECK(client.remove_if("/t/robots/r1", "server-b"));
  CHECK_FALSE(client.get("/t/robots/r1"));
  CHECK_FALSE(client.remove("/t/robots/r1"));
}

TEST_CASE("A prefix listing returns the keys under the prefix in order and nothing beside it",
          "[cluster][etcd]") {
  EtcdProcess etcd;
  EtcdClient client(etcd.options());
  client.put("/t/robots/b", "2");
  client.put("/t/robots/a", "1");
  client.put("/t/robots0", "not under /t/robots/");
  client.put("/t/robot", "not under /t/robots/");
  const auto kvs = client.list("/t/robots/");
  REQUIRE(kvs.size() == 2);
  CHECK(kvs[0].key == "/t/robots/a");
  CHECK(kvs[1].key == "/t/robots/b");
  CHECK(kvs[1].value == "2");
  CHECK(client.list("/nothing/").empty());
}

TEST_CASE("An etcd that does not answer is reported unavailable within the timeout, by name",
          "[cluster][etcd]") {
  EtcdOptions closed;
  closed.endpoints = {EtcdEndpoint{"127.0.0.1", testing::free_port()}};
  closed.timeout = 300ms;
  EtcdClient refused(closed);
  CHECK_THROWS_AS(refused.grant(5), EtcdUnavailable);
  CHECK_THROWS_WITH(refused.get("/x"), Catch::Contains(closed.endpoints[0].text()));

  EtcdProcess etcd;
  etcd.pause();  // accepts the connection (the kernel does), never answers
  EtcdClient silent(etcd.options(300ms));
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(silent.get("/x"), EtcdUnavailable);
  CHECK(std::chrono::steady_clock::now() - t0 < 2s);
  etcd.resume();
  CHECK_NOTHROW(silent.get("/x"));
}

TEST_CASE("The client goes on to the next endpoint when the first does not answer",
          "[cluster][etcd]") {
  EtcdProcess etcd;
  EtcdOptions both = etcd.options(300ms);
  both.endpoints.insert(both.endpoints.begin(), EtcdEndpoint{"127.0.0.1", testing::free_port()});
  EtcdClient client(both);
  client.put("/t/k", "v");
  REQUIRE(client.get("/t/k"));
  CHECK(client.get("/t/k")->value == "v");
}
