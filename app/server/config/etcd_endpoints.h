// Where a fleet's etcd listens: the "cluster.etcd" setting, parsed (docs/fleet.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fieldbrain::server::cluster {

struct EtcdEndpoint {
  std::string host;
  uint16_t port = 2379;
  std::string text() const { return host + ":" + std::to_string(port); }
};

// "http://127.0.0.1:2379,http://10.0.0.2:2379" (the scheme is optional; only http is spoken).
// Throws std::invalid_argument naming the bad item.
std::vector<EtcdEndpoint> parse_etcd_endpoints(const std::string& list);

}  // namespace fieldbrain::server::cluster
