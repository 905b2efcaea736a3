// A robot's key as the brain sees it: a 64-bit hash of the name the server (or a Python user)
// gives the robot, from which the robot's seeds derive (robot_seed, legacy_robot_seed). One
// definition, so a robot named the same way gets the same brain over a socket and in-process.
#pragma once

#include <cstdint>
#include <string_view>

namespace fieldbrain {

// FNV-1a 64 of the key: stable across runs, platforms and releases (saves and recordings name
// robots by it).
inline uint64_t robot_key_hash(std::string_view robot_key) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : robot_key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace fieldbrain
