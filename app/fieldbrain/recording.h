// Reads a session recorded by fieldbrain-server --record (app/server/recorder.h, docs/replay.md):
// session.json and the sensors/reward/motors .npy files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fieldbrain {

struct Recording {
  std::string folder;
  nlohmann::json meta;  // session.json
  std::string robot_key;
  uint64_t key_hash = 0;
  int64_t cycles = 0, sensory_dim = 0, motor_dim = 0, start_cycle = 0, dropped = 0;
  std::vector<float> sensors;  // [cycles, S]
  std::vector<float> reward;   // [cycles]
  std::vector<float> motors;   // [cycles, M], as sent to the robot
};

// Throws std::runtime_error naming the file and the problem (missing, not float32 .npy,
// shapes that disagree with session.json).
Recording load_recording(const std::string& folder);

// A float32 little-endian C-order .npy file: its shape and values.
struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;
};
NpyArray read_npy_f32(const std::string& path);

}  // namespace fieldbrain
