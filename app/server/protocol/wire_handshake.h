// A robot introducing itself, in any wire format: the one value a handshake is from the codec
// that decodes it (robot_codec.h) through the session to the brain worker's claim
// (worker/robot_types.h, BrainClaim::handshake), never copied field by field on the way.
#pragma once

#include <string>

#include "app/server/protocol/handshake.h"

namespace fieldbrain::server {

struct WireHandshake {
  std::string identity;  // binary: legacy profile key; JSON: robot_id or "json_<S>s_<M>m"
  bool identity_from_client = false;  // JSON robot_id given (binary keys never are)
  bool json_namespace = false;  // JSON ids and binary profile keys never meet (docs/robots.md)
  std::string token;            // JSON "token" ("" when absent)
  int sensory_dim = 0;
  int motor_dim = 0;
  Capabilities caps;  // binary: the parsed capability vector; JSON: S and M only
};

}  // namespace fieldbrain::server
