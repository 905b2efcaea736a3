// The server config's "cluster" object (docs/fleet.md): off unless "name" is set (or --cluster
// given), so a server alone needs no etcd.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace fieldbrain::server {

struct ClusterConfig {
  std::string name;                          // fleet name; "" = cluster mode off
  std::string etcd = "http://127.0.0.1:2379";  // etcd client URLs, comma-separated
  std::string server_id;     // unique in the fleet; "" = "<host name>:<robot port>"
  int64_t lease_ttl_s = 6;   // a silent server's robots are free after this (2..60)
  double renew_every_s = 1;  // lease renewal period (at most a third of the TTL)
  double etcd_timeout_s = 1;  // per etcd call and endpoint (0.05..10)

  bool enabled() const { return !name.empty(); }
  // Throws std::invalid_argument naming the key ("cluster.lease_ttl_s") when out of range.
  void validate() const;
};

// Unknown keys are refused, naming them ("cluster.ttl").
void from_json(const nlohmann::json& j, ClusterConfig& c);
void to_json(nlohmann::json& j, const ClusterConfig& c);

}  // namespace fieldbrain::server
