#include "app/server/web/web_request.h"

#include "app/server/session/access_token.h"

namespace fieldbrain::server::web {

std::string_view request_path(std::string_view target) {
  const size_t q = target.find('?');
  return q == std::string_view::npos ? target : target.substr(0, q);
}

std::string field_value(std::string_view text, std::string_view name, char separator) {
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(separator, pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view part = text.substr(pos, end - pos);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    if (part.size() > name.size() && part.substr(0, name.size()) == name &&
        part[name.size()] == '=') {
      return std::string(part.substr(name.size() + 1));
    }
    pos = end + 1;
  }
  return "";
}

TokenSource token_source(std::string_view target, std::string_view cookie_header,
                         const std::string& token) {
  const size_t q = target.find('?');
  if (q != std::string_view::npos &&
      tokens_equal(field_value(target.substr(q + 1), "token", '&'), token)) {
    return TokenSource::kQuery;
  }
  if (!cookie_header.empty() &&
      tokens_equal(field_value(cookie_header, kTokenCookie, ';'), token)) {
    return TokenSource::kCookie;
  }
  return TokenSource::kNone;
}

}  // namespace fieldbrain::server::web
