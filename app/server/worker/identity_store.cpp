#include "app/server/worker/identity_store.h"

#include <openssl/crypto.h>
#include <fcntl.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "app/server/protocol/handshake.h"
#include "app/server/worker/state_files.h"

namespace fieldbrain::server {

void IdentityStore::open(const std::string& dir) {
  records_.clear();
  if (dir.empty()) return;
  const auto path = std::filesystem::path(dir) / kFileName;
  if (!std::filesystem::exists(path)) return;
  std::ifstream in(path, std::ios::binary);
  parse(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()),
        path.string());
}

void IdentityStore::parse(std::string_view text, const std::string& path) {
  records_.clear();
  nlohmann::json j =
      nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  const auto bad = [&](const std::string& why) {
    return std::runtime_error(path + " " + why +
                              "; restore it from a backup, or delete it to forget every "
                              "robot's token");
  };
  if (j.is_discarded() || !j.is_object()) throw bad("is not valid JSON");
  const auto version = j.find("version");  // j.value() would throw on a non-number
  if (version == j.end() || !version->is_number_integer() || *version != 1) {
    throw bad("has an unknown version");
  }
  const auto robots = j.find("robots");
  if (robots == j.end() || !robots->is_object()) throw bad("has no \"robots\" object");
  for (auto it = robots->begin(); it != robots->end(); ++it) {
    try {
      IdentityRecord r;
      // Read wide and range-checked: get<int>() would wrap 99999999999 to 1215752191.
      const auto size_of = [&](const char* key) {
        const nlohmann::json& v = it->at(key);
        const bool in_range =
            v.is_number_integer() &&
            (v.is_number_unsigned() ? v.get<uint64_t>() <= 65535 : v.get<int64_t>() <= 65535) &&
            (v.is_number_unsigned() ? v.get<uint64_t>() >= 1 : v.get<int64_t>() >= 1);
        if (!in_range) {
          throw bad("has " + std::string(key) + " " + v.dump() + " for '" + it.key() +
                    "' (sizes are integers in 1..65535)");
        }
        return static_cast<int>(v.get<int64_t>());
      };
      r.sensory_dim = size_of("sensory_dim");
      r.motor_dim = size_of("motor_dim");
      r.token_sha256 = it->value("token_sha256", "");
      records_[it.key()] = r;
    } catch (const nlohmann::json::exception& e) {
      throw bad("has a bad record for '" + it.key() + "' (" + e.what() + ")");
    }
  }
}

const IdentityRecord* IdentityStore::find(const std::string& identity) const {
  auto it = records_.find(identity);
  return it == records_.end() ? nullptr : &it->second;
}

void IdentityStore::put(const std::string& identity, IdentityRecord record) {
  records_[identity] = std::move(record);
}

void IdentityStore::restore(const std::string& identity, const IdentityRecord* previous) {
  if (previous) {
    records_[identity] = *previous;
  } else {
    records_.erase(identity);
  }
}

void IdentityStore::save(const std::string& dir) const {
  const auto path = std::filesystem::path(dir) / kFileName;
  const auto tmp = std::filesystem::path(path.string() + ".tmp-" + std::to_string(::getpid()));
  const std::string content = to_file_json().dump(2);
  const auto fail = [&](const char* step) {
    const std::string why = std::strerror(errno);
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return std::runtime_error(std::string(step) + " " + tmp.string() + ": " + why);
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw fail("cannot create");
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      const auto e = fail("cannot write");
      ::close(fd);
      throw e;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const auto e = fail("cannot fsync");
    ::close(fd);
    throw e;
  }
  if (::close(fd) != 0) throw fail("cannot close");
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw fail("cannot rename");
  // The rename itself must survive a power cut: fsync the directory.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

nlohmann::json IdentityStore::to_file_json() const {
  nlohmann::json robots = nlohmann::json::object();
  for (const auto& [identity, r] : records_) {
    nlohmann::json entry = {{"sensory_dim", r.sensory_dim}, {"motor_dim", r.motor_dim}};
    if (!r.token_sha256.empty()) entry["token_sha256"] = r.token_sha256;
    robots[identity] = entry;
  }
  return {{"version", 1}, {"robots", robots}};
}

std::string identity_of(const IdentityClaim& claim) {
  return (claim.handshake.json_namespace ? "json:" : "bin:") + claim.key;
}

std::string new_token() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) throw std::runtime_error("no random bytes (OpenSSL)");
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

IdentityDecision decide_identity(IdentityStore& store, const RobotPolicy& policy,
                                 const IdentityClaim& claim) {
  IdentityDecision d;
  const WireHandshake& hs = claim.handshake;
  const std::string identity = identity_of(claim);
  const IdentityRecord* record = store.find(identity);
  const bool protect = hs.json_namespace && policy.require_tokens;
  std::string expected;  // SHA-256 of the token this claim must carry
  if (protect) {
    auto provisioned = policy.tokens.find(claim.key);
    if (provisioned != policy.tokens.end()) {
      expected = sha256_hex(provisioned->second);
    } else if (record) {
      expected = record->token_sha256;
    }
  }
  if (!expected.empty()) {
    const std::string sent = hs.token.empty() ? std::string() : sha256_hex(hs.token);
    if (sent.size() != expected.size() ||
        CRYPTO_memcmp(sent.data(), expected.data(), expected.size()) != 0) {
      d.code = kCodeIdentityRefused;
      d.error = hs.token.empty()
                    ? "robot_id '" + claim.key +
                          "' is registered: send its \"token\" (given in the first handshake "
                          "reply)"
                    : "wrong token for robot_id '" + claim.key + "'";
      return d;
    }
  }
  if (record && (record->sensory_dim != hs.sensory_dim || record->motor_dim != hs.motor_dim)) {
    d.code = kCodeDimensionMismatch;
    d.error = "'" + claim.key + "' has a saved brain for " + std::to_string(record->sensory_dim) +
              " sensors and " + std::to_string(record->motor_dim) + " motors, not " +
              std::to_string(hs.sensory_dim) + " and " + std::to_string(hs.motor_dim) +
              "; the save is kept (use another robot_id for other sizes)";
    return d;
  }
  d.ok = true;
  if (!record) {
    IdentityRecord fresh;
    fresh.sensory_dim = hs.sensory_dim;
    fresh.motor_dim = hs.motor_dim;
    if (protect && expected.empty()) {
      d.issued_token = new_token();
      fresh.token_sha256 = sha256_hex(d.issued_token);
    }
    store.put(identity, fresh);
    d.store_changed = true;
  } else if (protect && expected.empty()) {
    // A record made while tokens were off: the first claim now protects it.
    IdentityRecord updated = *record;
    d.issued_token = new_token();
    updated.token_sha256 = sha256_hex(d.issued_token);
    store.put(identity, updated);
    d.store_changed = true;
  }
  return d;
}

}  // namespace fieldbrain::server
