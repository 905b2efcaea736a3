// Runs the Python reference (scripts/reference/fieldbrain_ref.py fixture) into a fresh temp
// directory and reads what it wrote (docs/cycle.md "Fixture format").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

namespace fieldbrain::test {

class ReferenceFixture {
 public:
  // `args` are the fixture options after `--out DIR` (e.g. {"--R", "16", "--B", "1"}).
  // Throws std::runtime_error when the reference fails.
  explicit ReferenceFixture(const std::vector<std::string>& args);
  ~ReferenceFixture();
  ReferenceFixture(const ReferenceFixture&) = delete;
  ReferenceFixture& operator=(const ReferenceFixture&) = delete;

  const nlohmann::json& manifest() const { return manifest_; }
  // A float32 file of the fixture with the shape the manifest lists.
  torch::Tensor read(const std::string& file) const;

 private:
  std::string dir_;
  nlohmann::json manifest_;
};

}  // namespace fieldbrain::test
