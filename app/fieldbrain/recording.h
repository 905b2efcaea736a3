// Reads a session recorded by fieldbrain-server --record (app/server/worker/recorder.h, docs/replay.md):
// session.json and the sensors/reward/motors .npy files.
//
// A recording is input from disk, so nothing in it is trusted: every .npy header is checked
// against the file's size before anything is allocated, every session.json setting is bounded
// as the server's config is (BrainConfig::validate), and a recording may not name code to load
// (a field_step that is a file). Every refusal is a std::runtime_error that names the file and
// the field ("DIR/sensors.npy: 'shape' ...", "DIR/session.json: \"key_hash\" ..."). Torch-free,
// so the parsers are fuzzed as they are (test/fuzz/fuzz_npy.cpp, fuzz_session_json.cpp).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "brain/brain_config.h"

namespace fieldbrain {

struct Recording {
  std::string folder;
  nlohmann::json meta;  // session.json as read
  std::string robot_key;
  uint64_t key_hash = 0;
  int64_t cycles = 0, sensory_dim = 0, motor_dim = 0, start_cycle = 0, dropped = 0;
  BrainConfig brain;  // session.json's "brain", validated; field_step may still name a file
  std::vector<float> sensors;  // [cycles, S]
  std::vector<float> reward;   // [cycles]
  std::vector<float> motors;   // [cycles, M], as sent to the robot
};

// Reads the folder's session.json and the three arrays. The arrays may hold more rows than
// their headers say (the recorder appends the rows, then rewrites the header) and one array
// may be ahead of another (a crash between files): the replay has the rows every header
// names. A header that claims more rows than its file holds is refused, and so is a
// session.json whose "cycles" exceeds what the arrays hold.
Recording load_recording(const std::string& folder);

// session.json's text: every field Recording holds except the arrays, checked. `path` names
// the file in errors. Also refuses a brain whose field and attractor bank alone would not fit
// in this machine's memory (or the process's address-space limit).
Recording parse_session_json(std::string_view text, const std::string& path);

// The brain a replay builds: the recorded one with the command line's overrides ("" keeps the
// recorded value). A recorded field_step must be one of the built-in steps (reference, fast,
// script): a recording does not choose a file to load; --field-step may.
BrainConfig replay_brain_config(const Recording& recording, const std::string& field_step,
                                const std::string& device);

// A float32 little-endian C-order .npy file: its shape and values.
struct NpyArray {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// The element types a .npy header may name: what recordings hold (float32) and what the
// legacy profile's fixtures hold besides (float64 inputs and motors, int64 region counts).
enum class NpyType { Float32, Float64, Int64 };

// A .npy header (format 1.0, 2.0 or 3.0), checked against `file_size`: the data it describes
// (shape's product of values of its type from data_offset) lies inside the file. `head` is the
// file's first bytes: the whole header, or the whole file if shorter.
struct NpyHeader {
  std::vector<int64_t> shape;
  size_t data_offset = 0;
  uint64_t values = 0;  // the product of shape
  NpyType type = NpyType::Float32;
  size_t item_bytes = 4;
};
NpyHeader parse_npy_header(std::string_view head, uint64_t file_size, const std::string& name);

// The largest prefix parse_npy_header reads: the 12-byte preamble and NumPy's own limit on a
// header (numpy.lib.format's _MAX_HEADER_SIZE, 10000 bytes).
constexpr size_t kNpyMaxHead = 12 + 10000;

// A whole .npy file in memory (`name` in errors) / on disk. Allocate only what the file holds.
NpyArray parse_npy_f32(std::string_view bytes, const std::string& name);
NpyArray read_npy_f32(const std::string& path);

}  // namespace fieldbrain
