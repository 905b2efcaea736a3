// The seed of one robot's random streams: one derivation for every brain (the fieldbrain
// profile's Philox streams, the legacy profile's generators), so a robot named the same way
// gets the same numbers over a socket, in-process and in a replay. Header-only and torch-free.
#pragma once

#include <cstdint>

namespace fieldbrain {

// splitmix64 finaliser of docs/cycle.md "Randomness": the Philox seed of robot `key` (its
// robot_key_hash, brain/robot_key.h) under the config's `seed`; the top bit is always clear.
inline uint64_t robot_seed(uint64_t seed, uint64_t key) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (key + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z = z ^ (z >> 31);
  return z & 0x7FFFFFFFFFFFFFFFULL;
}

}  // namespace fieldbrain
