#include "app/fieldbrain/legacy_fixture.h"

#include "app/fieldbrain/recording.h"

#include <torch/version.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>
#include <stdexcept>

namespace fieldbrain::legacy {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw std::runtime_error(path + ": " + problem);
}

torch::Tensor check_array(const std::string& path, torch::ScalarType dtype,
                          std::vector<int64_t> shape) {
  torch::Tensor t = read_npy(path);
  if (t.scalar_type() != dtype) {
    fail(path, std::string("dtype ") + c10::toString(t.scalar_type()) + ", expected " +
                   c10::toString(dtype));
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) shape[i] = i < size_t(t.dim()) ? t.size(int64_t(i)) : -1;
  }
  if (t.sizes().vec() != shape) {
    fail(path, "shape " + c10::str(t.sizes()) + ", expected " + c10::str(c10::IntArrayRef(shape)) +
                   " (from meta.json)");
  }
  return t;
}

}  // namespace

torch::Tensor read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The replay's reader checks the header against the file's size (and is fuzzed: fuzz-npy);
  // a fixture must also end where its data does.
  const NpyHeader h =
      parse_npy_header(std::string_view(bytes).substr(0, kNpyMaxHead), bytes.size(), path);
  const uint64_t want = h.values * h.item_bytes, have = bytes.size() - h.data_offset;
  if (have != want) {
    fail(path, "the header's shape needs " + std::to_string(want) + " data bytes, the file has " +
                   std::to_string(have) + " (trailing bytes)");
  }
  const torch::ScalarType dtype = h.type == NpyType::Float32   ? torch::kFloat32
                                  : h.type == NpyType::Float64 ? torch::kFloat64
                                                               : torch::kInt64;
  torch::Tensor t = torch::empty(h.shape, torch::TensorOptions().dtype(dtype));
  if (want > 0) std::memcpy(t.data_ptr(), bytes.data() + h.data_offset, size_t(want));
  return t;
}

LegacyFixture load_legacy_fixture(const std::string& dir) {
  LegacyFixture f;
  f.dir = dir;
  const std::string meta_path = dir + "/meta.json";
  std::ifstream in(meta_path);
  if (!in) fail(meta_path, "cannot open");
  int64_t N = 0, S = 0, M = 0;
  try {
    f.meta = nlohmann::json::parse(in);
    for (const char* key : {"seed", "R", "S", "M", "cycles"}) {
      if (!f.meta.contains(key) || !f.meta.at(key).is_number_integer()) {
        throw std::runtime_error(std::string("no integer '") + key + "'");
      }
    }
    N = f.meta.at("cycles").get<int64_t>();
    S = f.meta.at("S").get<int64_t>();
    M = f.meta.at("M").get<int64_t>();
    if (N < 1 || S < 1 || M < 1 || f.meta.at("R").get<int64_t>() < 1) {
      throw std::runtime_error("cycles, R, S and M must be positive");
    }
  } catch (const std::exception& e) {
    fail(meta_path, e.what());
  }
  f.inputs = check_array(dir + "/inputs.npy", torch::kFloat64, {N, -1});
  if (f.inputs.size(1) < 1) fail(dir + "/inputs.npy", "no input columns");
  f.motors = check_array(dir + "/motors.npy", torch::kFloat64, {N, M});
  f.confidence = check_array(dir + "/confidence.npy", torch::kFloat64, {N});
  f.regions = check_array(dir + "/regions.npy", torch::kInt64, {N});
  return f;
}

std::string legacy_fixture_root() {
  return std::string(FIELDBRAIN_SOURCE_DIR) + "/test/fixtures/legacy";
}

std::string libtorch_release() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
}

std::string legacy_cycle_fixture_root(std::string* recorded) {
  const std::string root = legacy_fixture_root();
  const std::string release = libtorch_release();
  if (recorded != nullptr) recorded->clear();
  for (const std::string& dir : {root, root + "/torch-" + release}) {
    std::ifstream in(dir + "/r16_s24m4_smooth/meta.json");
    if (!in) continue;
    std::string torch_version;
    try {
      torch_version = nlohmann::json::parse(in).at("torch").get<std::string>();
    } catch (const std::exception&) {
      continue;  // load_legacy_fixture names the problem when a test reads it
    }
    if (torch_version.rfind(release + ".", 0) == 0) return dir;
    if (recorded != nullptr) *recorded += (recorded->empty() ? "" : ", ") + torch_version;
  }
  return "";
}

std::string legacy_cycle_fixture_missing(const std::string& recorded) {
  const std::string release = libtorch_release();
  return "the original's cycles were recorded under torch " + recorded + "; this is LibTorch " +
         release + ", whose float32 kernels give the original itself other numbers. Record this " +
         "release's set with FIXTURES=test/fixtures/legacy/torch-" + release +
         " scripts/legacy/make_fixtures.sh";
}

const std::vector<std::string>& legacy_scenarios() {
  static const std::vector<std::string> names = {
      "r16_s24m4_smooth",        "r16_s24m4_random_reward", "r16_s24m4_negative_reward",
      "r16_s12m6_smooth_reward", "r16_s12m6_random",        "r16_s12m6_negative",
      "r32_s24m4_smooth_reward"};
  return names;
}

}  // namespace fieldbrain::legacy
