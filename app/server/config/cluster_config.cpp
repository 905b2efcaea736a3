#include "app/server/config/cluster_config.h"

#include <stdexcept>

#include "app/server/config/etcd_endpoints.h"
#include "app/server/config/config_keys.h"

namespace fieldbrain::server {

namespace {
constexpr const char* kPrefix = "cluster.";

bool plain_name(const std::string& s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_' || c == '.' || c == ':';
    if (!ok) return false;
  }
  return true;
}
}  // namespace

void from_json(const nlohmann::json& j, ClusterConfig& c) {
  if (!j.is_object()) {
    throw std::invalid_argument("config key 'cluster' must be an object, not " +
                                config::describe_value(j));
  }
  config::check_known_keys(j, kPrefix,
                           {"name", "etcd", "server_id", "lease_ttl_s", "renew_every_s",
                            "etcd_timeout_s"});
  read_config_key(j, kPrefix, "name", c.name);
  read_config_key(j, kPrefix, "etcd", c.etcd);
  read_config_key(j, kPrefix, "server_id", c.server_id);
  read_config_key(j, kPrefix, "lease_ttl_s", c.lease_ttl_s);
  read_config_key(j, kPrefix, "renew_every_s", c.renew_every_s);
  read_config_key(j, kPrefix, "etcd_timeout_s", c.etcd_timeout_s);
}

void to_json(nlohmann::json& j, const ClusterConfig& c) {
  j = {{"name", c.name},
       {"etcd", c.etcd},
       {"server_id", c.server_id},
       {"lease_ttl_s", c.lease_ttl_s},
       {"renew_every_s", c.renew_every_s},
       {"etcd_timeout_s", c.etcd_timeout_s}};
}

void ClusterConfig::validate() const {
  // The name and id become parts of etcd keys: no '/' that would reach another fleet's keys.
  require_config(name.empty() || plain_name(name, 64), kPrefix, "name",
                 "must be 1-64 letters, digits, '-', '_', '.' or ':' (got \"" + name + "\")");
  require_config(server_id.empty() || plain_name(server_id, 128), kPrefix, "server_id",
                 "must be 1-128 letters, digits, '-', '_', '.' or ':' (got \"" + server_id +
                     "\")");
  try {
    cluster::parse_etcd_endpoints(etcd);
  } catch (const std::invalid_argument& e) {
    require_config(false, kPrefix, "etcd", std::string("is not a list of etcd URLs: ") + e.what());
  }
  require_config(lease_ttl_s >= 2 && lease_ttl_s <= 60, kPrefix, "lease_ttl_s",
                 "must be in 2..60 seconds");
  require_config(renew_every_s >= 0.05 && renew_every_s * 3 <= double(lease_ttl_s), kPrefix,
                 "renew_every_s", "must be at least 0.05 s and at most a third of lease_ttl_s");
  require_config(etcd_timeout_s >= 0.05 && etcd_timeout_s <= 10, kPrefix, "etcd_timeout_s",
                 "must be in 0.05..10 seconds");
  require_config(etcd_timeout_s < renew_every_s * 3, kPrefix, "etcd_timeout_s",
                 "must be shorter than three renewal periods");
}

}  // namespace fieldbrain::server
