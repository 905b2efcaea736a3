// The version every fieldbrain executable reports (--version, the server's first log line,
// its ready line, /metrics and telemetry): the project version and, in a git checkout, `git
// describe --tags --always --dirty` at build time ("1.0.0 (git 097c701-dirty)").
// cmake/FieldbrainVersion.cmake generates the definition on every build (only a changed
// version recompiles, one small file).
#pragma once

#include <string>

namespace fieldbrain {

const char* version();

// "<program> <version>", the line --version prints.
inline std::string version_line(const std::string& program) { return program + " " + version(); }

}  // namespace fieldbrain
