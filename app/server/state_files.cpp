#include "app/server/state_files.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>

namespace fieldbrain::server {

uint64_t robot_key_hash(const std::string& robot_key) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : robot_key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string state_path(const std::string& dir, const std::string& robot_key,
                       const std::string& ext) {
  std::string safe = robot_key;
  bool changed = false;
  for (char& c : safe) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) {
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

}  // namespace fieldbrain::server
