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

// The per-cycle scenarios recorded by the original under this process's LibTorch release: the
// original's numbers depend on the release's float32 kernels (sin, norms and reductions changed
// between 1.13 and 2.6), and the legacy profile follows the release it runs on. The main set,
// <root>/<scenario>, was recorded under torch 1.13 (Debian 12); another release's set lives in
// <root>/torch-<major>.<minor>/ (torch 2.6: Debian 13). Returns the folder whose scenarios'
// meta.json name this release, or "" when none was recorded (then `recorded` lists the
// releases that were, for the caller's message). scripts/legacy/make_fixtures.sh records a set.
std::string legacy_cycle_fixture_root(std::string* recorded = nullptr);
// This process's LibTorch release as "<major>.<minor>" (what legacy_cycle_fixture_root matches).
std::string libtorch_release();
// Why there is nothing to compare with when legacy_cycle_fixture_root found no set for this
// release (`recorded` as it filled it), and the command that records one.
std::string legacy_cycle_fixture_missing(const std::string& recorded);

// The committed per-cycle scenarios of brain/legacy/LEGACY.md, in its order (without the
// construction folder, r16_s24m4_construction).
const std::vector<std::string>& legacy_scenarios();

}  // namespace fieldbrain::legacy
