// The original Python field step's recorded inputs and outputs (test/fixtures/golden/), read
// with torch::pickle_load; see the README beside the files for what each key holds.
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

namespace fieldbrain_test {

struct GoldenStep {
  torch::Tensor field, noise, wave, ef, scalars, legacy_out;
};

struct GoldenFile {
  std::string name;      // file name, e.g. legacy_field_step_R8_A.pt
  std::string scenario;  // "A".."D"
  int64_t R = 0;
  std::vector<GoldenStep> steps;
};

// Every legacy_field_step_*.pt under test/fixtures/golden, sorted by name. Throws when the
// folder is missing or a file lacks a key.
std::vector<GoldenFile> load_golden_files();

// The folder holding the fixtures (in the source tree).
std::string golden_dir();

// The arguments of one step moved to `device`.
GoldenStep to_device(const GoldenStep& s, const torch::Device& device);

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b);

// The tolerance the issue sets for agreeing with the original's field step.
constexpr double kGoldenTolerance = 2e-6;

}  // namespace fieldbrain_test
