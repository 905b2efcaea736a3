#include "test/legacy/legacy_fixture.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <regex>
#include <stdexcept>

namespace fieldbrain::legacy {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw std::runtime_error(path + ": " + problem);
}

// The value of 'key' in a .npy header dict, as written (quotes and all), or "" when absent.
std::string header_value(const std::string& header, const std::string& key) {
  std::smatch m;
  const std::regex re("'" + key + R"(':\s*('[^']*'|True|False|\([^)]*\)))");
  return std::regex_search(header, m, re) ? m[1].str() : std::string();
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
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) {
    fail(path, "not a .npy file (no \\x93NUMPY magic)");
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = size_t(static_cast<unsigned char>(bytes[8])) |
                 size_t(static_cast<unsigned char>(bytes[9])) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(path, "truncated header");
    for (int i = 0; i < 4; ++i) {
      header_len |= size_t(static_cast<unsigned char>(bytes[size_t(8 + i)])) << (8 * i);
    }
    offset = 12;
  } else {
    fail(path, "unknown .npy format version " + std::to_string(major));
  }
  if (bytes.size() < offset + header_len) fail(path, "truncated header");
  const std::string header = bytes.substr(offset, header_len);
  offset += header_len;
  if (header.empty() || header.back() != '\n' || header.find('{') == std::string::npos) {
    fail(path, "malformed header");
  }

  const std::string descr = header_value(header, "descr");
  torch::ScalarType dtype;
  size_t item = 0;
  if (descr == "'<f4'") {
    dtype = torch::kFloat32, item = 4;
  } else if (descr == "'<f8'") {
    dtype = torch::kFloat64, item = 8;
  } else if (descr == "'<i8'") {
    dtype = torch::kInt64, item = 8;
  } else {
    fail(path, "dtype " + (descr.empty() ? std::string("missing") : descr) +
                   ", expected little-endian float32, float64 or int64 ('<f4', '<f8', '<i8')");
  }
  const std::string order = header_value(header, "fortran_order");
  if (order != "False") fail(path, "not in C order (fortran_order " + order + ")");
  const std::string shape_text = header_value(header, "shape");
  if (shape_text.empty()) fail(path, "no shape in the header");

  std::vector<int64_t> shape;
  uint64_t numel = 1;
  const std::regex token(R"([^,()\s]+)");
  for (std::sregex_iterator it(shape_text.begin(), shape_text.end(), token), end; it != end; ++it) {
    const std::string d = it->str();
    if (d.find_first_not_of("0123456789") != std::string::npos || d.size() > 12) {
      fail(path, "bad dimension '" + d + "' in shape " + shape_text);
    }
    shape.push_back(std::stoll(d));
    numel *= uint64_t(shape.back());
    if (numel > (uint64_t(1) << 40)) fail(path, "shape " + shape_text + " is implausibly large");
  }
  const uint64_t want = numel * item;
  const uint64_t have = bytes.size() - offset;
  if (have != want) {
    fail(path, "the header's shape " + shape_text + " needs " + std::to_string(want) +
                   " data bytes, the file has " + std::to_string(have) +
                   (have < want ? " (truncated)" : " (trailing bytes)"));
  }
  torch::Tensor t = torch::empty(shape, torch::TensorOptions().dtype(dtype));
  if (want > 0) std::memcpy(t.data_ptr(), bytes.data() + offset, size_t(want));
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

const std::vector<std::string>& legacy_scenarios() {
  static const std::vector<std::string> names = {
      "r16_s24m4_smooth",        "r16_s24m4_random_reward", "r16_s24m4_negative_reward",
      "r16_s12m6_smooth_reward", "r16_s12m6_random",        "r16_s12m6_negative",
      "r32_s24m4_smooth_reward"};
  return names;
}

}  // namespace fieldbrain::legacy
