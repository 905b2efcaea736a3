// Saves written by old releases (test/fixtures/saves/, made by scripts/make_old_saves.sh) and
// the sidecar JSON that the old release's own code wrote beside each: what it held when it
// saved (every buffer's dtype, shape and SHA-256). Tests compare what today's loaders read
// with the sidecar, never with what today's code would write.
#pragma once

#include <torch/torch.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "hrr/sha256.h"

namespace fieldbrain::test {

// The brain archive versions with a fixture, each written by the newest commit that wrote it.
inline const std::vector<int>& old_brain_versions() {
  static const std::vector<int> versions{1, 2, 3};
  return versions;
}

inline std::string old_save_path(const std::string& file) {
  return std::string(FIELDBRAIN_SOURCE_DIR) + "/test/fixtures/saves/" + file;
}

// brain-v<N>.json or hrr-v<N>.json; throws naming the file when it is missing or malformed.
inline nlohmann::json old_save_sidecar(const std::string& file) {
  std::ifstream in(old_save_path(file));
  if (!in) throw std::runtime_error("missing fixture " + old_save_path(file));
  return nlohmann::json::parse(in);
}

// SHA-256 (hex) of a tensor's bytes in row-major order, as the old writer hashed them.
inline std::string tensor_sha256(const torch::Tensor& t) {
  const torch::Tensor c = t.detach().cpu().contiguous();
  hrr::Sha256 sha;
  sha.update(c.data_ptr(), static_cast<std::size_t>(c.numel() * c.element_size()));
  return hrr::to_hex(sha.finish());
}

// Whether `t` is the tensor a sidecar entry {"dtype", "shape", "sha256"} describes; `hash_key`
// picks another recorded hash (the attractor bank's "live_slots_sha256").
inline bool matches_sidecar(const torch::Tensor& t, const nlohmann::json& entry,
                            const char* hash_key = "sha256") {
  return std::string(c10::toString(t.scalar_type())) == entry.at("dtype").get<std::string>() &&
         t.sizes().vec() == entry.at("shape").get<std::vector<int64_t>>() &&
         tensor_sha256(t) == entry.at(hash_key).get<std::string>();
}

}  // namespace fieldbrain::test
