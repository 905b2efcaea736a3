// Who owns which robot identity. Identities are namespaced: "json:<robot_id>" for JSON-lines
// robots, "bin:<profile key>" for binary (framing A/B/C) robots, so a JSON client can never
// claim a binary robot's brain whatever robot_id it sends. Each identity that ever had a
// brain has a record: its sizes (a handshake with other sizes is refused, the save kept) and,
// for JSON ids, the SHA-256 of its token (the token itself is never stored).
//
// Records live in memory on the brain thread and, with persistence on, in
// "<state_dir>/identities.json" (written by the state writer thread, atomically).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "app/server/config/robot_policy.h"
#include "app/server/protocol/wire_handshake.h"

namespace fieldbrain::server {

struct IdentityRecord {
  int sensory_dim = 0;
  int motor_dim = 0;
  std::string token_sha256;  // "" = no token (binary robots, or tokens off when first seen)
};

class IdentityStore {
 public:
  static constexpr const char* kFileName = "identities.json";

  // Reads the records of `dir` (nothing when dir is "" or has no file yet). Throws
  // std::runtime_error naming the file when it exists but does not parse, or a record's sizes
  // are not in 1..65535: starting without it would hand every protected robot to whoever
  // claims it first.
  void open(const std::string& dir);
  // The file's text, as open() reads it; `path` names the file in errors (open() calls this;
  // so does the fuzz harness test/fuzz/fuzz_identities.cpp).
  void parse(std::string_view text, const std::string& path);
  // Writes the records to "<dir>/identities.json" durably (temporary file, fsync, rename,
  // fsync of the directory); throws std::runtime_error saying why (e.g. "No space left on
  // device") when any step fails, leaving the previous file in place.
  void save(const std::string& dir) const;
  const IdentityRecord* find(const std::string& identity) const;
  void put(const std::string& identity, IdentityRecord record);
  // Puts back what find() returned before a put (null: the identity had no record).
  void restore(const std::string& identity, const IdentityRecord* previous);
  size_t size() const { return records_.size(); }
  // The file's content ({"version":1,"robots":{identity:{...}}}).
  nlohmann::json to_file_json() const;

 private:
  std::map<std::string, IdentityRecord> records_;
};

// What a handshake claims: the handshake itself, as the codec decoded it (its namespace, S, M
// and token are read from it, never copied out), and the key the robot goes by on this server.
// Held by value: the fleet's admission (worker/fleet_membership.h) keeps it past the call.
struct IdentityClaim {
  WireHandshake handshake;  // json_namespace: a JSON-lines robot (its own namespace; tokens apply)
  std::string key;          // robot_id, or the binary key ("picarx_12s_6m[@address]")
};

struct IdentityDecision {
  bool ok = false;
  int code = 0;                // legacy error code when refused
  std::string error;           // the sentence the robot and the log get
  std::string issued_token;    // a token to hand out (first claim of a protected JSON id)
  bool store_changed = false;  // the store got a new or updated record: write it
};

// "json:<key>" or "bin:<key>".
std::string identity_of(const IdentityClaim& claim);

// Checks a claim against the store and the policy, and records a first claim. A refused claim
// changes nothing (no record, no file touched).
IdentityDecision decide_identity(IdentityStore& store, const RobotPolicy& policy,
                                 const IdentityClaim& claim);

// 32 hex digits from OpenSSL's CSPRNG.
std::string new_token();

}  // namespace fieldbrain::server
