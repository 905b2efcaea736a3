// Test helpers that look inside a FieldBrain through its registered buffers.
#pragma once

#include <map>
#include <string>

#include <torch/torch.h>

#include "brain/field_brain.h"

namespace fieldbrain::test {

// FieldBrain(config, keys) (the holder's forwarding constructor cannot take a braced list).
FieldBrain make_brain(BrainConfig config, std::vector<uint64_t> keys);
// A registered buffer by name (e.g. "prediction.pred"); fails the test if absent.
torch::Tensor buffer(const FieldBrainImpl& brain, const std::string& name);
// Deep copies of every buffer, on the CPU (retired attractor slots zeroed: they are not state).
std::map<std::string, torch::Tensor> snapshot(const FieldBrainImpl& brain);
// Name of the first buffer that differs (bitwise) between two snapshots, "" when none does.
std::string first_difference(const std::map<std::string, torch::Tensor>& a,
                             const std::map<std::string, torch::Tensor>& b);
// Name of the first tensor or "meta" where two archives differ (bitwise), "" when none does.
std::string first_archive_difference(const ArchiveContents& a, const ArchiveContents& b);
// max |a - b| over all elements, computed in double.
double max_diff(const torch::Tensor& a, const torch::Tensor& b);
// A path in the temp directory unique to this process: <tmp>/fieldbrain-<pid>-<name>.
std::string temp_path(const std::string& name);
// A config small enough for fast tests.
BrainConfig small_config(int64_t R = 8, int64_t S = 24, int64_t M = 4);
// Deterministic test inputs: smooth sensors per (robot key, cycle), with an occasional reward.
torch::Tensor test_sensors(int64_t cycle, const std::vector<uint64_t>& keys, int64_t S);
torch::Tensor test_reward(int64_t cycle, const std::vector<uint64_t>& keys);

}  // namespace fieldbrain::test
