// Reading one key of a JSON config object, with errors that name the key the way the user
// wrote it ("config key 'robots.max_live_brains': ..."). Shared by the server's config and the
// "robots" policy object inside it.
#pragma once

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "brain/config_reader.h"

namespace fieldbrain::server {

// `prefix` is "" for top-level keys and "robots." for the policy's. The type checks, the
// messages and "did you mean" are brain/config_reader.h's, shared with the brain's config.
template <typename T>
void read_config_key(const nlohmann::json& j, const std::string& prefix, const char* key, T& out) {
  config::read_key(j, prefix, key, out);
}

inline void require_config(bool ok, const std::string& prefix, const char* key,
                           const std::string& what) {
  if (!ok) throw std::invalid_argument("config key '" + prefix + key + "' " + what);
}

// Refuses a value of `key` that is not one of `valid`, listing them with the closest one.
inline void require_one_of(const std::string& value, const std::string& prefix, const char* key,
                           const std::vector<std::string>& valid) {
  if (std::find(valid.begin(), valid.end(), value) == valid.end()) {
    config::not_a_choice(prefix + key, value, valid);
  }
}

}  // namespace fieldbrain::server
