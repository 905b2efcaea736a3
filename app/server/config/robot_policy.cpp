#include "app/server/config/robot_policy.h"

#include <set>
#include <stdexcept>

#include "app/server/config/config_keys.h"

namespace fieldbrain::server {
namespace {

template <typename T>
void read_policy_key(const nlohmann::json& j, const char* key, T& out) {
  read_config_key(j, "robots.", key, out);
}

void require_policy(bool ok, const char* key, const std::string& what) {
  require_config(ok, "robots.", key, what);
}

}  // namespace

void from_json(const nlohmann::json& j, RobotPolicy& p) {
  if (!j.is_object()) {
    throw std::invalid_argument("config key 'robots' must be an object, not " +
                                config::describe_value(j));
  }
  static const std::set<std::string> known = {
      "require_tokens",   "tokens",          "binary_key",         "address_names",
      "takeover_after_s", "max_live_brains", "state_dir_max_bytes",
      "loop_budget_ms",   "json_loop_budget_ms", "max_live_brains_per_address"};
  config::check_known_keys(j, "robots.", std::vector<std::string>(known.begin(), known.end()));
  read_policy_key(j, "require_tokens", p.require_tokens);
  read_policy_key(j, "tokens", p.tokens);
  read_policy_key(j, "binary_key", p.binary_key);
  read_policy_key(j, "address_names", p.address_names);
  read_policy_key(j, "takeover_after_s", p.takeover_after_s);
  read_policy_key(j, "max_live_brains", p.max_live_brains);
  read_policy_key(j, "max_live_brains_per_address", p.max_live_brains_per_address);
  read_policy_key(j, "state_dir_max_bytes", p.state_dir_max_bytes);
  read_policy_key(j, "loop_budget_ms", p.loop_budget_ms);
  read_policy_key(j, "json_loop_budget_ms", p.json_loop_budget_ms);
}

void to_json(nlohmann::json& j, const RobotPolicy& p) {
  // Provisioned tokens are secrets: --print-config shows which ids have one, not the token.
  nlohmann::json tokens = nlohmann::json::object();
  for (const auto& [id, token] : p.tokens) tokens[id] = "<provisioned>";
  j = {{"require_tokens", p.require_tokens},
       {"tokens", tokens},
       {"binary_key", p.binary_key},
       {"address_names", p.address_names},
       {"takeover_after_s", p.takeover_after_s},
       {"max_live_brains", p.max_live_brains},
       {"max_live_brains_per_address", p.max_live_brains_per_address},
       {"state_dir_max_bytes", p.state_dir_max_bytes},
       {"loop_budget_ms", p.loop_budget_ms},
       {"json_loop_budget_ms", p.json_loop_budget_ms}};
}

void RobotPolicy::validate() const {
  require_one_of(binary_key, "robots.", "binary_key", {"profile", "address"});
  for (const auto& [id, token] : tokens) {
    require_policy(!id.empty() && id.size() <= 128, "tokens", "ids must have 1..128 characters");
    require_policy(token.size() >= 8 && token.size() <= 256, "tokens",
                   "entry '" + id + "' must be a token of 8..256 characters");
  }
  for (const auto& [address, name] : address_names) {
    require_policy(!name.empty() && name.size() <= 64, "address_names",
                   "entry '" + address + "' must name the robot in 1..64 characters");
  }
  require_policy(takeover_after_s > 0, "takeover_after_s", "must be > 0");
  require_policy(max_live_brains >= 1, "max_live_brains", "must be >= 1");
  require_policy(max_live_brains_per_address >= 0 &&
                     max_live_brains_per_address <= max_live_brains,
                 "max_live_brains_per_address",
                 "must be in 0..max_live_brains (0 = a quarter of max_live_brains)");
  require_policy(state_dir_max_bytes >= 0, "state_dir_max_bytes", "must be >= 0 (0 = no budget)");
  require_policy(loop_budget_ms >= 0, "loop_budget_ms", "must be >= 0 (0 = no warning)");
  require_policy(json_loop_budget_ms >= 0, "json_loop_budget_ms", "must be >= 0 (0 = no warning)");
}

}  // namespace fieldbrain::server
