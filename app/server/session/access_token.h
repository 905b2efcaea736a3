// The one access rule shared by the monitor port and the web monitor: when `monitor_token` is
// set, a client that is not this machine must present it; this machine's own address needs
// nothing (local tools, the legacy push clients).
#pragma once

#include <string>

namespace fieldbrain::server {

// 127.0.0.1 and ::1 (also v4-mapped) only: other 127.x peers count as remote, so a token is
// testable on one host and a forwarded port cannot pass as local by accident.
bool is_local_peer(const std::string& address);

// Compares in time independent of where the first difference is; an empty expected token
// never matches.
bool tokens_equal(const std::string& given, const std::string& expected);

}  // namespace fieldbrain::server
