// The legacy profile's fixtures (test/fixtures/legacy/, brain/legacy/LEGACY.md "Fixtures"): what
// the pinned original em-brain did, cycle by cycle, written by scripts/legacy/run_original.py.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

namespace fieldbrain::legacy {

// One fixture folder. inputs float64 [N, L] (L = S, or S + 1 with the reward last), motors
// float64 [N, M], confidence float64 [N], regions int64 [N]; N = meta["cycles"]. CPU tensors.
struct LegacyFixture {
  std::string dir;
  nlohmann::json meta;  // meta.json
  torch::Tensor inputs, motors, confidence, regions;
};

// Reads and checks a fixture folder: meta.json's keys (seed, R, S, M, cycles) and every array's
// dtype and shape against them. Throws std::runtime_error naming the file and the problem.
LegacyFixture load_legacy_fixture(const std::string& dir);

// A .npy file (format versions 1-3): little-endian float32, float64 or int64 in C order, as a
// CPU tensor of that dtype, read with the replay's header parser (recording.h). The header
// must describe exactly the bytes that follow it (a truncated or padded file is refused).
// Throws std::runtime_error naming the file and the problem.
torch::Tensor read_npy(const std::string& path);

// <repository>/test/fixtures/legacy (compiled in from FIELDBRAIN_SOURCE_DIR).
std::string legacy_fixture_root();

// The committed per-cycle scenarios of brain/legacy/LEGACY.md, in its order (without the
// construction folder, r16_s24m4_construction).
const std::vector<std::string>& legacy_scenarios();

}  // namespace fieldbrain::legacy
