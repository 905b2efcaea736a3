// Reading one key of a JSON config object, with errors that name the key the way the user
// wrote it ("config key 'robots.max_live_brains': ..."). Shared by the server's config and the
// "robots" policy object inside it.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace fieldbrain::server {

// `prefix` is "" for top-level keys and "robots." for the policy's.
template <typename T>
void read_config_key(const nlohmann::json& j, const std::string& prefix, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end()) return;
  try {
    out = it->get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument("config key '" + prefix + key + "': " + e.what());
  }
}

inline void require_config(bool ok, const std::string& prefix, const char* key,
                           const std::string& what) {
  if (!ok) throw std::invalid_argument("config key '" + prefix + key + "' " + what);
}

}  // namespace fieldbrain::server
