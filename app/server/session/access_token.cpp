#include "app/server/session/access_token.h"

namespace fieldbrain::server {

bool is_local_peer(const std::string& address) {
  return address == "127.0.0.1" || address == "::1" || address == "::ffff:127.0.0.1";
}

bool tokens_equal(const std::string& given, const std::string& expected) {
  unsigned diff = given.size() == expected.size() ? 0u : 1u;
  const size_t n = expected.empty() ? 1 : expected.size();
  for (size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned>(given[i] ^ (expected.empty() ? 0 : expected[i % n]));
  return diff == 0 && !expected.empty();
}

}  // namespace fieldbrain::server
