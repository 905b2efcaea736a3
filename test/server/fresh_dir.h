// A scratch directory for a server test's state files: emptied and created anew.
#pragma once

#include <filesystem>
#include <system_error>

namespace fieldbrain::server::testing {

inline std::filesystem::path fresh_dir(const char* name) {
  auto dir = std::filesystem::temp_directory_path() / name;
  {
    std::error_code ignored;  // a save of an earlier run may still be landing; leftovers are harmless
    std::filesystem::remove_all(dir, ignored);
  }
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace fieldbrain::server::testing
