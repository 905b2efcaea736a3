// A small client for etcd's v3 API through its HTTP/JSON gateway (POST /v3/...), enough for a
// fleet of fieldbrain servers to agree on who runs which robot (docs/fleet.md): leases, a
// create-if-absent transaction, reads by key and prefix, and a delete that only removes a key
// still holding the value this server wrote. Keys and values are plain strings here; the gateway
// carries them base64-encoded.
//
// Synchronous and thread-safe (each call opens its own connection: the calls are a handful per
// second, and a fresh connection never carries a half-read reply of an earlier time-out). Every
// call is bounded by the options' timeout, tries the endpoints in turn starting from the last one
// that answered, and throws EtcdUnavailable when none answers: callers treat that as "etcd is
// down", not as a refusal.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/server/config/etcd_endpoints.h"

namespace fieldbrain::server::cluster {

// No endpoint answered within the timeout (refused, unreachable, timed out, or a 5xx reply).
struct EtcdUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// An endpoint answered, but not as etcd would (a 4xx reply, a body that is not etcd's JSON).
struct EtcdError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct EtcdOptions {
  std::vector<EtcdEndpoint> endpoints;
  std::chrono::milliseconds timeout{1000};  // per endpoint and call
};

struct KeyValue {
  std::string key;
  std::string value;
  int64_t lease = 0;            // 0 = no lease
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
};

// create(): whether the key was created, else who holds it now.
struct CreateResult {
  bool created = false;
  std::optional<KeyValue> current;  // the holder's key when not created (absent if it vanished)
};

class EtcdClient {
 public:
  explicit EtcdClient(EtcdOptions options);

  // A lease of `ttl_s` seconds (etcd may round it up); returns its id.
  int64_t grant(int64_t ttl_s);
  // Renews the lease; returns the TTL granted from now, or 0 when the lease has expired or was
  // revoked (keys under it are gone).
  int64_t keep_alive(int64_t lease);
  void revoke(int64_t lease);

  // Puts key = value under `lease` (0: none) only if the key does not exist; one transaction.
  CreateResult create(const std::string& key, const std::string& value, int64_t lease);
  // Puts key = value unconditionally.
  void put(const std::string& key, const std::string& value, int64_t lease = 0);
  std::optional<KeyValue> get(const std::string& key);
  // Every key starting with `prefix`, in key order.
  std::vector<KeyValue> list(const std::string& prefix);
  // Puts key = value only while the key is at `mod_revision` (unchanged since it was read);
  // returns whether it did.
  bool replace_if_unchanged(const std::string& key, const std::string& value,
                            int64_t mod_revision);
  // Deletes the key only while it still holds `value`; returns whether it did.
  bool remove_if(const std::string& key, const std::string& value);
  // Deletes the key whatever it holds; returns whether it existed.
  bool remove(const std::string& key);

  const EtcdOptions& options() const { return options_; }

 private:
  // POSTs `body` to `path` on the first endpoint that answers; returns the reply's body.
  std::string call(const std::string& path, const std::string& body);

  EtcdOptions options_;
  std::mutex mutex_;     // guards preferred_
  size_t preferred_ = 0;  // the endpoint that answered last
};

}  // namespace fieldbrain::server::cluster
