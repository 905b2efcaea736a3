#include "hrr/sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace fieldbrain::hrr {

void Sha256::ContextDeleter::operator()(void* context) const {
  EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context));
}

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (!context_ ||
      EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(context_.get()), EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256: libcrypto could not initialise a digest context");
  }
}

Sha256& Sha256::update(const void* data, std::size_t size) {
  if (size > 0 && EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(context_.get()), data, size) != 1) {
    throw std::runtime_error("SHA-256: digest update failed");
  }
  return *this;
}

Sha256& Sha256::update_u64_le(std::uint64_t value) {
  unsigned char bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(value >> (8 * i));
  return update(bytes, sizeof bytes);
}

Sha256Digest Sha256::finish() {
  Sha256Digest digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(context_.get()), digest.data(), &length) != 1 ||
      length != digest.size()) {
    throw std::runtime_error("SHA-256: digest finalisation failed");
  }
  return digest;
}

std::string to_hex(const Sha256Digest& digest) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * digest.size());
  for (std::uint8_t byte : digest) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 15]);
  }
  return out;
}

}  // namespace fieldbrain::hrr
