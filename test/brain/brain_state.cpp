#include "test/brain/brain_state.h"

#include <unistd.h>  // getpid

#include <filesystem>

#include <cmath>
#include <stdexcept>

namespace fieldbrain::test {

FieldBrain make_brain(BrainConfig config, std::vector<uint64_t> keys) {
  return FieldBrain(std::move(config), std::move(keys));
}

torch::Tensor buffer(const FieldBrainImpl& brain, const std::string& name) {
  for (const auto& item : brain.named_buffers(true)) {
    if (item.key() == name) return item.value();
  }
  throw std::runtime_error("no buffer named " + name);
}

std::map<std::string, torch::Tensor> snapshot(const FieldBrainImpl& brain) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& item : brain.named_buffers(true)) out[item.key()] = item.value().cpu().clone();
  // A retired attractor slot is never read again (its next use overwrites it whole), and saves
  // keep only the live slots: the state is the bank's live slots, so dead ones compare as zero.
  const auto live = out.at("attractors.valid");
  auto& bank = out.at("attractors.bank");
  for (int64_t b = 0; b < live.size(0); ++b)
    for (int64_t a = 0; a < live.size(1); ++a)
      if (live[b][a].item<int64_t>() == 0) bank[b][a].zero_();
  return out;
}

std::string first_difference(const std::map<std::string, torch::Tensor>& a,
                             const std::map<std::string, torch::Tensor>& b) {
  if (a.size() != b.size()) return "(different buffer sets)";
  for (const auto& [name, t] : a) {
    const auto it = b.find(name);
    if (it == b.end() || !torch::equal(t, it->second)) return name;
  }
  return "";
}

std::string first_archive_difference(const ArchiveContents& a, const ArchiveContents& b) {
  if (a.meta != b.meta) return "meta";
  return first_difference(a.tensors, b.tensors);
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("fieldbrain-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

BrainConfig small_config(int64_t R, int64_t S, int64_t M) {
  BrainConfig c;
  c.resolution = R;
  c.sensory_dim = S;
  c.motor_dim = M;
  c.attractor_capacity = 4;
  c.seed = 7;
  return c;
}

double max_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

torch::Tensor test_sensors(int64_t cycle, const std::vector<uint64_t>& keys, int64_t S) {
  auto t = torch::empty({static_cast<int64_t>(keys.size()), S}, torch::kFloat);
  for (size_t b = 0; b < keys.size(); ++b) {
    for (int64_t j = 0; j < S; ++j) {
      t[b][j] = static_cast<float>(0.8 * std::sin(0.05 * (j + 1) * cycle + 1.3 * keys[b] + 0.7 * j));
    }
  }
  return t;
}

torch::Tensor test_reward(int64_t cycle, const std::vector<uint64_t>& keys) {
  auto t = torch::zeros({static_cast<int64_t>(keys.size())}, torch::kFloat);
  for (size_t b = 0; b < keys.size(); ++b) {
    if ((cycle + static_cast<int64_t>(keys[b])) % 7 == 3) t[b] = (cycle % 2 ? 0.6f : -0.4f);
  }
  return t;
}

}  // namespace fieldbrain::test
