#include "test/parity/golden_fixture.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "test/support/files.h"

namespace fs = std::filesystem;

namespace fieldbrain_test {

namespace {

torch::IValue read_pickle(const fs::path& path) {
  if (!fs::is_regular_file(path)) throw std::runtime_error("cannot open " + path.string());
  return torch::pickle_load(fieldbrain::test::file_bytes(path));
}

torch::IValue get(const c10::Dict<torch::IValue, torch::IValue>& d, const std::string& key,
                  const fs::path& path) {
  auto it = d.find(key);
  if (it == d.end()) throw std::runtime_error(path.string() + ": no key " + key);
  return it->value();
}

}  // namespace

std::string golden_dir() { return std::string(FIELDBRAIN_SOURCE_DIR) + "/test/fixtures/golden"; }

std::vector<GoldenFile> load_golden_files() {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(golden_dir())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("legacy_field_step_", 0) == 0 && entry.path().extension() == ".pt")
      paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<GoldenFile> files;
  for (const auto& path : paths) {
    const auto dict = read_pickle(path).toGenericDict();
    GoldenFile f;
    f.name = path.filename().string();
    f.scenario = get(dict, "scenario", path).toStringRef();
    f.R = get(dict, "R", path).toInt();
    const int64_t steps = get(dict, "steps", path).toInt();
    for (int64_t i = 0; i < steps; ++i) {
      const std::string p = "step" + std::to_string(i) + ".";
      auto t = [&](const char* key) { return get(dict, p + key, path).toTensor(); };
      f.steps.push_back({t("field"), t("noise"), t("wave"), t("ef"), t("scalars"), t("legacy_out")});
    }
    files.push_back(std::move(f));
  }
  return files;
}

GoldenStep to_device(const GoldenStep& s, const torch::Device& device) {
  return {s.field.to(device), s.noise.to(device), s.wave.to(device),
          s.ef.to(device),    s.scalars.to(device), s.legacy_out.to(device)};
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kCPU) - b.to(torch::kCPU)).abs().max().item<double>();
}

}  // namespace fieldbrain_test
