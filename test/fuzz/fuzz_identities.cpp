// libFuzzer harness: the server's identities.json (IdentityStore::parse, what open() reads at
// start-up). It refuses with std::runtime_error naming the file, or holds records that write
// back (to_file_json) to a file that parses to the same records; a claim on any record is
// decided without touching anything but the store.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "app/server/worker/identity_store.h"

using namespace fieldbrain::server;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  IdentityStore store;
  try {
    store.parse(text, "fuzz/identities.json");
  } catch (const std::runtime_error& e) {
    check(std::string(e.what()).rfind("fuzz/identities.json ", 0) == 0);
    return 0;
  }
  const nlohmann::json written = store.to_file_json();
  IdentityStore again;
  again.parse(written.dump(), "fuzz/identities.json");  // throws (a finding) if it cannot
  check(again.to_file_json() == written);
  check(again.size() == store.size());

  RobotPolicy policy;
  for (const auto& [identity, entry] : written["robots"].items()) {
    const bool json = identity.rfind("json:", 0) == 0;
    if (!json && identity.rfind("bin:", 0) != 0) continue;
    IdentityClaim claim;
    claim.handshake.json_namespace = json;
    claim.handshake.identity = claim.key = identity.substr(json ? 5 : 4);
    claim.handshake.sensory_dim = entry["sensory_dim"].get<int>();
    claim.handshake.motor_dim = entry["motor_dim"].get<int>();
    const IdentityDecision d = decide_identity(store, policy, claim);
    check(d.ok || !d.error.empty());
    break;  // one claim per input keeps each run cheap
  }
  return 0;
}
