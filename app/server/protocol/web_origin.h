// Which web pages may open the web monitor's WebSocket (issue 36 item 2). A browser sends the
// page's origin ("http://host:port") with every WebSocket handshake, and a WebSocket is not
// bound by the same-origin policy: without this check any page a person on the robot machine
// opens could read the robots' telemetry. Allowed are:
//   - the server's own origin: "http://" + the request's Host header, when that host names this
//     machine (an IP address, "localhost", the host name, or the host name + ".local"). A page
//     served under another name that resolves here (DNS rebinding: evil.example pointed at
//     127.0.0.1) has a matching Host but is not ours, so other names need the list below;
//   - the origins of the config key `web_allowed_origins` (comma-separated), e.g. a reverse
//     proxy's "https://robots.lab.example";
//   - a handshake without an Origin header: browsers always send one, so this is a non-browser
//     client (websocat, curl, a script), which no web page can drive.
// Anything else ("null" from a sandboxed page or a file included) is refused.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fieldbrain::server {

struct WebOrigin {
  std::string scheme;  // "http" or "https"
  std::string host;    // lower case; an IPv6 address keeps its brackets
  int port = 0;        // the scheme's default when the origin names none
  bool operator==(const WebOrigin& o) const {
    return scheme == o.scheme && host == o.host && port == o.port;
  }
};

// "scheme://host[:port]" with scheme http or https, nothing after the port (no path, user,
// query); nullopt for anything else.
std::optional<WebOrigin> parse_web_origin(std::string_view text);

// The comma-separated list of the config key `web_allowed_origins` (blanks around entries
// ignored, empty = none). Throws std::invalid_argument naming the key and the bad entry.
std::vector<WebOrigin> parse_allowed_origins(const std::string& list);

// Whether a WebSocket handshake with this Origin header (`has_origin` false: none was sent)
// and Host header may open, given the allowed list and this machine's host name.
bool web_origin_allowed(bool has_origin, std::string_view origin, std::string_view host_header,
                        const std::vector<WebOrigin>& allowed, std::string_view machine_name);

// This machine's host name (gethostname), lower case; "" when unknown.
std::string machine_host_name();

}  // namespace fieldbrain::server
