#include "app/fieldbrain/recording.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <regex>
#include <stdexcept>

namespace fieldbrain {

NpyArray read_npy_f32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  char magic[8];
  in.read(magic, 8);
  if (!in || std::memcmp(magic, "\x93NUMPY", 6) != 0) throw std::runtime_error(path + ": not a .npy file");
  uint32_t header_len = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    in.read(reinterpret_cast<char*>(b), 2);
    header_len = b[0] | (b[1] << 8);
  } else {
    unsigned char b[4];
    in.read(reinterpret_cast<char*>(b), 4);
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (uint32_t(b[3]) << 24);
  }
  std::string header(header_len, ' ');
  in.read(header.data(), header_len);
  if (!in) throw std::runtime_error(path + ": truncated header");
  if (header.find("'descr': '<f4'") == std::string::npos ||
      header.find("'fortran_order': False") == std::string::npos) {
    throw std::runtime_error(path + ": expected little-endian float32 in C order");
  }
  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('shape':\s*\(([^)]*)\))"))) {
    throw std::runtime_error(path + ": no shape in the header");
  }
  NpyArray a;
  const std::string dims = m[1];
  const std::regex number(R"(\d+)");
  std::sregex_iterator it(dims.begin(), dims.end(), number), end;
  int64_t n = 1;
  for (; it != end; ++it) {
    a.shape.push_back(std::stoll(it->str()));
    n *= a.shape.back();
  }
  a.values.resize(size_t(n));
  in.read(reinterpret_cast<char*>(a.values.data()), std::streamsize(n * 4));
  if (!in) throw std::runtime_error(path + ": fewer values than its shape says");
  return a;
}

Recording load_recording(const std::string& folder) {
  Recording r;
  r.folder = folder;
  std::ifstream in(folder + "/session.json");
  if (!in) throw std::runtime_error("cannot open " + folder + "/session.json");
  try {
    r.meta = nlohmann::json::parse(in);
    r.robot_key = r.meta.at("robot_key").get<std::string>();
    r.key_hash = std::stoull(r.meta.at("key_hash").get<std::string>());
    r.sensory_dim = r.meta.at("sensory_dim").get<int64_t>();
    r.motor_dim = r.meta.at("motor_dim").get<int64_t>();
    r.start_cycle = r.meta.value("start_cycle", int64_t{0});
    r.dropped = r.meta.value("dropped", int64_t{0});
  } catch (const std::exception& e) {
    throw std::runtime_error(folder + "/session.json: " + e.what());
  }
  NpyArray s = read_npy_f32(folder + "/sensors.npy");
  NpyArray w = read_npy_f32(folder + "/reward.npy");
  NpyArray m = read_npy_f32(folder + "/motors.npy");
  if (s.shape.size() != 2 || s.shape[1] != r.sensory_dim || w.shape.size() != 1 ||
      m.shape.size() != 2 || m.shape[1] != r.motor_dim) {
    throw std::runtime_error(folder + ": array shapes do not match session.json's S and M");
  }
  // A recording cut short by a crash may have one array a row ahead of the others.
  r.cycles = std::min({s.shape[0], w.shape[0], m.shape[0]});
  s.values.resize(size_t(r.cycles * r.sensory_dim));
  w.values.resize(size_t(r.cycles));
  m.values.resize(size_t(r.cycles * r.motor_dim));
  r.sensors = std::move(s.values);
  r.reward = std::move(w.values);
  r.motors = std::move(m.values);
  return r;
}

}  // namespace fieldbrain
