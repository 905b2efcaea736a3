#include "app/server/worker/state_files.h"

#include <openssl/evp.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace fieldbrain::server {
namespace {

bool file_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

}  // namespace

std::string sha256_hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 failed (OpenSSL)");
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

std::string state_file_name(const std::string& identity, const std::string& ext) {
  std::string readable;
  for (char c : identity.substr(0, 48)) readable += file_name_char(c) ? c : '_';
  // ("json:r1" reads "json_r1"); a leading '.' would hide the file.
  if (!readable.empty() && readable[0] == '.') readable[0] = '_';
  return readable + "-" + sha256_hex(identity).substr(0, 20) + ext;
}

std::string state_path(const std::string& dir, const std::string& robot_key,
                       const std::string& ext) {
  std::string safe = robot_key;
  bool changed = false;
  for (char& c : safe) {
    if (!file_name_char(c)) {
      c = '_';
      changed = true;
    }
  }
  if (safe.empty() || safe[0] == '.') {
    safe = "_" + safe;
    changed = true;
  }
  if (changed) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx",
                  static_cast<unsigned long long>(robot_key_hash(robot_key)));
    safe += "-";
    safe += hex;
  }
  return (std::filesystem::path(dir) / (safe + ext)).string();
}

std::string move_aside(const std::string& path) {
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  std::string target = path + ".corrupt-" + std::to_string(now);
  for (int n = 2; std::filesystem::exists(target) && n < 1000; ++n) {
    target = path + ".corrupt-" + std::to_string(now) + "-" + std::to_string(n);
  }
  std::error_code ec;
  std::filesystem::rename(path, target, ec);
  return ec ? std::string() : target;
}

int remove_stale_temps(const std::string& dir) {
  int removed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.find(".tmp-") == std::string::npos || !it->is_regular_file()) continue;
    std::error_code rm;
    if (std::filesystem::remove(it->path(), rm)) ++removed;
  }
  return removed;
}

}  // namespace fieldbrain::server
