// libFuzzer harness: monitor request lines (parse_monitor_command and the replies that echo
// them) and telemetry objects turned into the 2025-08-20 push format. Every reply must be one
// line of valid JSON, and a request is echoed escaped and cut, never verbatim at any length.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "app/server/protocol/monitor_envelope.h"
#include "app/server/protocol/printable.h"

using namespace fieldbrain::server;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

void check_reply(const std::string& line, size_t max_size) {
  check(!line.empty() && line.back() == '\n');
  check(line.find('\n') == line.size() - 1);
  check(line.size() <= max_size);
  check(!nlohmann::json::parse(line, nullptr, false).is_discarded());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string line(reinterpret_cast<const char*>(data), size);
  const MonitorCommand cmd = parse_monitor_command(line);
  check(cmd.text.size() <= line.size());
  // Replies are bounded whatever the request (the echo is cut at 200 input bytes).
  check_reply(monitor_unknown(cmd.text), 8192);
  check_reply(monitor_error(cmd.text, "fuzz"), 4096);
  check_reply(monitor_success(cmd.text, nullptr), 4096);
  if (!cmd.args.empty()) check_reply(monitor_not_found(cmd.text, cmd.args[0]), 4096);
  const std::string p = printable(line, 100);
  for (char c : p) check(c >= 0x20 && c < 0x7f);

  const auto telemetry = nlohmann::json::parse(line, nullptr, false);
  if (!telemetry.is_discarded() && telemetry.is_object()) {
    const std::string pushed = legacy_push_line(telemetry);
    check_reply(pushed, pushed.size());
    const auto j = nlohmann::json::parse(pushed);
    check(j.contains("cycles") && j.contains("motors"));
    if (j["motors"].is_array()) check(j["motors"].size() <= 5);
  }
  TelemetryPush push(1, line + "\n");
  (void)push.legacy_line();
  return 0;
}
