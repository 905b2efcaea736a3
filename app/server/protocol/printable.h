// Client-supplied text made safe for a log line or a reply: control characters and bytes
// outside printable ASCII are escaped (\n, \r, \t, \xNN), so a robot_id holding a newline
// cannot start a forged log line, and the result is cut at a length limit, so a 1 MB
// "type" string cannot turn into a 1 MB log line or reply.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fieldbrain::server {

// Default cut for names (robot ids, unknown types, monitor requests) in logs and replies.
constexpr size_t kPrintableLimit = 80;

// Escaped and, past `max_chars` input bytes, truncated with a note of the full size
// ("abc...(+1234 bytes)"). Pure ASCII out; allocates only the returned string.
std::string printable(std::string_view text, size_t max_chars = kPrintableLimit);

}  // namespace fieldbrain::server
