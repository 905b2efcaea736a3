#include "app/server/protocol/web_origin.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace fieldbrain::server {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

// "host[:port]" or "[v6]:port" (an origin's authority, or a Host header) into host and port
// (`default_port` when none is given); false when malformed.
bool split_authority(std::string_view text, int default_port, std::string* host, int* port) {
  std::string_view name, rest;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close < 2) return false;
    name = text.substr(0, close + 1);
    rest = text.substr(close + 1);
    for (char c : name.substr(1, name.size() - 2)) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return false;
    }
  } else {
    const size_t colon = text.find(':');
    name = text.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon);
    if (name.empty() || !std::all_of(name.begin(), name.end(), host_char)) return false;
  }
  *port = default_port;
  if (!rest.empty()) {
    if (rest.front() != ':' || rest.size() < 2 || rest.size() > 6) return false;
    int p = 0;
    for (char c : rest.substr(1)) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
      p = p * 10 + (c - '0');
    }
    if (p < 1 || p > 65535) return false;
    *port = p;
  }
  *host = lower(name);
  return true;
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    return inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), buf) == 1;
  }
  return inet_pton(AF_INET, host.c_str(), buf) == 1;
}

// A Host header that names this machine, so "http://<Host>" is the monitor's own origin. Any
// other name may be an attacker's domain resolving here (DNS rebinding).
bool names_this_machine(const std::string& host, std::string_view machine_name) {
  if (is_ip_literal(host) || host == "localhost") return true;
  if (machine_name.empty()) return false;
  return host == machine_name || host == std::string(machine_name) + ".local";
}

}  // namespace

std::optional<WebOrigin> parse_web_origin(std::string_view text) {
  const size_t sep = text.find("://");
  if (sep == std::string_view::npos) return std::nullopt;
  WebOrigin o;
  o.scheme = lower(text.substr(0, sep));
  int default_port = 0;
  if (o.scheme == "http") {
    default_port = 80;
  } else if (o.scheme == "https") {
    default_port = 443;
  } else {
    return std::nullopt;
  }
  if (!split_authority(text.substr(sep + 3), default_port, &o.host, &o.port)) return std::nullopt;
  return o;
}

std::vector<WebOrigin> parse_allowed_origins(const std::string& list) {
  std::vector<WebOrigin> out;
  std::string_view rest(list);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view entry = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (entry.empty()) continue;
    const auto origin = parse_web_origin(entry);
    if (!origin) {
      throw std::invalid_argument(
          "config key 'web_allowed_origins': '" + std::string(entry.substr(0, 200)) +
          "' is not an origin (scheme://host[:port], scheme http or https, no path)");
    }
    out.push_back(*origin);
  }
  return out;
}

bool web_origin_allowed(bool has_origin, std::string_view origin, std::string_view host_header,
                        const std::vector<WebOrigin>& allowed, std::string_view machine_name) {
  if (!has_origin) return true;  // not a browser (web_origin.h)
  const auto o = parse_web_origin(trim(origin));
  if (!o) return false;
  if (std::find(allowed.begin(), allowed.end(), *o) != allowed.end()) return true;
  WebOrigin own;
  own.scheme = "http";  // the monitor serves plain HTTP; behind TLS, list the proxy's origin
  if (!split_authority(trim(host_header), 80, &own.host, &own.port)) return false;
  return *o == own && names_this_machine(own.host, machine_name);
}

std::string machine_host_name() {
  char name[256] = {0};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return lower(name);
}

}  // namespace fieldbrain::server
