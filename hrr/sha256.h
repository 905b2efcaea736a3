// SHA-256 through OpenSSL's libcrypto (EVP), the digest behind deterministic vocabularies and
// the integrity check of saved memories. Incremental, so callers can hash metadata and raw
// tensor bytes without concatenating them first.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace fieldbrain::hrr {

using Sha256Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();  // throws std::runtime_error if libcrypto cannot provide SHA-256
  Sha256& update(const void* data, std::size_t size);
  Sha256& update(std::string_view text) { return update(text.data(), text.size()); }
  Sha256& update_u64_le(std::uint64_t value);  // 8 bytes, little endian on every platform
  Sha256Digest finish();                       // the object may not be updated afterwards

 private:
  struct ContextDeleter {
    void operator()(void* context) const;
  };
  std::unique_ptr<void, ContextDeleter> context_;
};

std::string to_hex(const Sha256Digest& digest);

}  // namespace fieldbrain::hrr
