// libFuzzer harness: a recording's session.json as `fieldbrain replay` reads it
// (parse_session_json, then the brain a replay would build). It refuses with
// std::runtime_error naming the file, or returns settings inside the server's bounds
// (BrainConfig::validate), S and M equal to the brain's, and a field step that is built in.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "app/fieldbrain/recording.h"

using namespace fieldbrain;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void check_refusal(const std::runtime_error& e) {
  check(std::string(e.what()).rfind("fuzz/session.json: ", 0) == 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Recording r;
  try {
    r = parse_session_json(text, "fuzz/session.json");
  } catch (const std::runtime_error& e) {
    check_refusal(e);
    return 0;
  }
  r.brain.validate();  // throws (uncaught: a finding) if parse let a setting through
  check(r.sensory_dim == r.brain.sensory_dim && r.motor_dim == r.brain.motor_dim);
  check(r.start_cycle >= 0 && r.dropped >= 0 && r.cycles >= 0);
  r.folder = "fuzz";
  try {
    const BrainConfig c = replay_brain_config(r, "", "");
    check(c.field_step == "reference" || c.field_step == "fast" || c.field_step == "script");
  } catch (const std::runtime_error& e) {
    check_refusal(e);
  }
  check(replay_brain_config(r, "reference", "cpu").field_step == "reference");
  return 0;
}
