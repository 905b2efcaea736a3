// Where each robot's saved brain lives, and what happens to a file that does not load.
#pragma once

#include <cstdint>
#include <string>

namespace fieldbrain::server {

// "<dir>/<safe key><ext>". Characters outside [A-Za-z0-9._-] become '_'; when that changed
// the key, a hash of the original is appended so "a/b" and "a_b" never share a file.
std::string state_path(const std::string& dir, const std::string& robot_key,
                       const std::string& ext);

// Renames a file that failed to load to "<path>.corrupt-<unix time>[-n]" so the robot can
// start fresh without losing the evidence. Returns the new path ("" if the rename failed).
std::string move_aside(const std::string& path);

// FNV-1a 64 of the key: the robot's generator seed (stable across runs and platforms).
uint64_t robot_key_hash(const std::string& robot_key);

}  // namespace fieldbrain::server
