// Whole files for the tests: a log, a save, a fixture, read at once or written at once.
// Reading is binary and a missing or unreadable file reads as empty: the test's own check on
// what it expected then fails with the file named in its message.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace fieldbrain::test {

inline std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// For readers that take bytes (torch::pickle_load).
inline std::vector<char> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Replaces the file's content with `bytes`.
inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline void write_file(const std::filesystem::path& path, const std::vector<char>& bytes) {
  write_file(path, std::string_view(bytes.data(), bytes.size()));
}

}  // namespace fieldbrain::test
