// The parts of an HTTP request the web monitor decides on, as pure functions of its text, so
// the libFuzzer harness (test/fuzz/fuzz_web_request.cpp) reaches them without sockets: the
// path without its query string, and whether the monitor_token came along (in the query
// string or the fieldbrain_token cookie).
#pragma once

#include <string>
#include <string_view>

namespace fieldbrain::server::web {

inline constexpr std::string_view kTokenCookie = "fieldbrain_token";

// "/ws?token=x" -> "/ws"; a target without '?' is its own path.
std::string_view request_path(std::string_view target);

// The value of `name` in a query string or a Cookie header ("a=1&b=2", "a=1; b=2"), or "".
std::string field_value(std::string_view text, std::string_view name, char separator);

// How a request proved it may see the monitor.
enum class TokenSource { kNone, kQuery, kCookie };

// Which of the request's places (target's query, Cookie header) carries `token` (compared in
// constant time); kNone when neither does. `token` must not be empty.
TokenSource token_source(std::string_view target, std::string_view cookie_header,
                         const std::string& token);

}  // namespace fieldbrain::server::web
