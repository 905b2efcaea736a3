// Where each robot's saved brain lives, and what happens to files that must not stay.
#pragma once

#include <cstdint>
#include <string>

#include "brain/robot_key.h"

namespace fieldbrain::server {

// The file name of a robot's save: "<readable part>-<digest><ext>", where the digest is 20 hex
// digits (80 bits) of SHA-256 over the exact identity ("json:a/b", "bin:picarx_12s_6m"), so
// two identities never share a file ("a/b" and "a_b" differ in the digest even though their
// readable parts are both "json_a_b"). The readable part is the identity with characters
// outside [A-Za-z0-9._-] replaced by '_', cut to 48 characters, for people listing the dir.
std::string state_file_name(const std::string& identity, const std::string& ext);

// The file name releases before this one used: "<dir>/<key with unsafe chars as '_'>[-fnv]"
// + ext. Only read, to adopt a save made by an older server.
std::string state_path(const std::string& dir, const std::string& robot_key,
                       const std::string& ext);

// Renames a file that failed to load to "<path>.corrupt-<unix time>[-n]" so the robot can
// start fresh without losing the evidence. Returns the new path ("" if the rename failed).
std::string move_aside(const std::string& path);

// Deletes the "*.tmp-*" files a killed server left behind (an interrupted atomic write) in
// `dir`; returns how many. Called once at start-up, before anything writes there.
int remove_stale_temps(const std::string& dir);

// Lower-case hex SHA-256 of `text`.
std::string sha256_hex(const std::string& text);

// The robot's key hash (its seeds, the old file names): brain/robot_key.h.
using fieldbrain::robot_key_hash;

}  // namespace fieldbrain::server
