// The "cluster" object of the server config.
#include "test/support/catch.h"

#include "app/server/config/cluster_config.h"

using fieldbrain::server::ClusterConfig;
using nlohmann::json;

namespace {
ClusterConfig parsed(const json& j) {
  ClusterConfig c = j.get<ClusterConfig>();
  c.validate();
  return c;
}
}  // namespace

TEST_CASE("Cluster mode is off unless the fleet is named", "[cluster][config]") {
  CHECK_FALSE(ClusterConfig{}.enabled());
  const ClusterConfig c = parsed({{"name", "lab"}, {"etcd", "http://10.0.0.5:2379"}});
  CHECK(c.enabled());
  CHECK(c.etcd == "http://10.0.0.5:2379");
  CHECK(c.lease_ttl_s == 6);
  CHECK(json(c).get<ClusterConfig>().name == "lab");  // round trip
}

TEST_CASE("A bad cluster setting stops the start naming its key", "[cluster][config]") {
  CHECK_THROWS_WITH(parsed({{"ttl", 5}}), Catch::Contains("cluster.ttl"));
  CHECK_THROWS_WITH(parsed({{"name", "a/b"}}), Catch::Contains("cluster.name"));
  CHECK_THROWS_WITH(parsed({{"name", "lab"}, {"server_id", "../x"}}),
                    Catch::Contains("cluster.server_id"));
  CHECK_THROWS_WITH(parsed({{"name", "lab"}, {"etcd", "https://x:1"}}),
                    Catch::Contains("cluster.etcd"));
  CHECK_THROWS_WITH(parsed({{"lease_ttl_s", 1}}), Catch::Contains("cluster.lease_ttl_s"));
  CHECK_THROWS_WITH(parsed({{"lease_ttl_s", 3}, {"renew_every_s", 2}}),
                    Catch::Contains("cluster.renew_every_s"));
  CHECK_THROWS_WITH(parsed({{"etcd_timeout_s", 20}}), Catch::Contains("cluster.etcd_timeout_s"));
  CHECK_THROWS_WITH(parsed({{"lease_ttl_s", "6"}}), Catch::Contains("cluster.lease_ttl_s"));
  CHECK_THROWS_WITH(parsed(json::array()), Catch::Contains("'cluster'"));
}
