// The "robots" object of the server config: who a robot is (tokens, how binary robots are
// keyed), when a new connection may take over a robot's brain, and the quotas that bound what
// robots can make the server hold (live brains in memory, bytes of saves on disk).
// docs/robots.md explains every key to robot owners and operators.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace fieldbrain::server {

struct RobotPolicy {
  // JSON robot ids are protected: the first handshake of an id gets a token, later ones must
  // send it. false = trusted network, any client may claim any JSON id.
  bool require_tokens = true;
  // Tokens provisioned in advance (robot_id -> token); they win over issued ones.
  std::map<std::string, std::string> tokens;
  // How binary (framing A/B/C) robots are keyed: "profile" = the legacy "<hw>_<S>s_<M>m"
  // (every PiCar-X shares one brain), "address" = "<profile>@<peer address>".
  std::string binary_key = "profile";
  // Peer address -> name: a binary robot from a listed address is "<profile>@<name>" in
  // either mode (a fleet owner names the robots that matter).
  std::map<std::string, std::string> address_names;
  // A new handshake for a robot whose connection has sent nothing for this long takes the
  // brain over (the old connection is closed); otherwise binary robots get a twin.
  double takeover_after_s = 3.0;
  // Brains in memory (connected or loading); the next handshake is refused.
  int max_live_brains = 64;
  // Of them, brains made for handshakes from one peer address (issue 24 item 4), so one
  // address cannot take every slot. 0 = a quarter of max_live_brains (at least 1): 16 of 64.
  int max_live_brains_per_address = 0;
  int live_brains_per_address() const {
    return max_live_brains_per_address > 0 ? max_live_brains_per_address
                                           : std::max(1, max_live_brains / 4);
  }
  // Bytes of saves the state directory may hold; past it the saves of robots that are not
  // connected are deleted, least trained first (then least recently written), and never one
  // more trained than the save that went over the budget. 0 = no budget.
  int64_t state_dir_max_bytes = int64_t{20} << 30;
  // How long a robot's control loop waits for a reply (app/server/worker/latency_watch.h): a robot
  // whose replies take longer is warned about (log, telemetry, web page). Binary framings: the
  // PiCar-X client waits 50 ms. JSON robots: no fixed loop known, 0 = not watched.
  double loop_budget_ms = 50;
  double json_loop_budget_ms = 0;

  // Throws std::invalid_argument naming the key ("robots.max_live_brains ...").
  void validate() const;
};

void from_json(const nlohmann::json& j, RobotPolicy& p);
void to_json(nlohmann::json& j, const RobotPolicy& p);

}  // namespace fieldbrain::server
