#include "app/fieldbrain/recording.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace fieldbrain {

namespace {

constexpr const char* kRecordingFormat = "fieldbrain-recording-1";  // app/server/worker/recorder.cpp
// NumPy's NPY_MAXDIMS before 2.0: more dimensions than any .npy reader must accept.
constexpr size_t kNpyMaxDims = 32;
constexpr int64_t kFieldChannels = 64;  // the field is [64, R, R, R] per robot (docs/cycle.md)

[[noreturn]] void refuse(const std::string& name, const std::string& why) {
  throw std::runtime_error(name + ": " + why);
}

// A Python literal as numpy writes a .npy header: {'key': value, ...} whose values are
// strings, True/False or tuples of integers. Enough of Python's grammar for that, no more.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : s_(text), name_(name) {}

  void expect(char c, const char* what) {
    skip_space();
    if (at_ >= s_.size() || s_[at_] != c) {
      refuse(name_, fmt::format("header is not a Python dict: expected {} at byte {}", what, at_));
    }
    ++at_;
  }
  bool accept(char c) {
    skip_space();
    if (at_ < s_.size() && s_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  std::string string(const char* what) {
    skip_space();
    if (at_ >= s_.size() || (s_[at_] != '\'' && s_[at_] != '"')) {
      refuse(name_, fmt::format("header: expected a quoted {} at byte {}", what, at_));
    }
    const char quote = s_[at_++];
    const size_t end = s_.find(quote, at_);
    if (end == std::string_view::npos) refuse(name_, fmt::format("header: unterminated {}", what));
    std::string out(s_.substr(at_, end - at_));
    at_ = end + 1;
    return out;
  }
  bool boolean(const char* key) {
    skip_space();
    const size_t start = at_;
    while (at_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[at_]))) ++at_;
    const std::string_view t = s_.substr(start, at_ - start);
    if (t == "True") return true;
    if (t == "False") return false;
    refuse(name_, fmt::format("header '{}' is {}, not True or False", key, printable(t)));
  }
  std::vector<int64_t> shape() {
    expect('(', "'(' opening 'shape'");
    std::vector<int64_t> dims;
    while (!accept(')')) {
      skip_space();
      const size_t start = at_;
      while (at_ < s_.size() && s_[at_] != ',' && s_[at_] != ')' && s_[at_] != ' ') ++at_;
      dims.push_back(dimension(s_.substr(start, at_ - start)));
      if (dims.size() > kNpyMaxDims) {
        refuse(name_, fmt::format("header 'shape' has more than {} dimensions", kNpyMaxDims));
      }
      if (!accept(',')) {
        expect(')', "',' or ')' in 'shape'");
        break;
      }
    }
    return dims;
  }
  void end() {
    skip_space();
    if (at_ != s_.size())
      refuse(name_, fmt::format("header has text after its dict at byte {}", at_));
  }

  static std::string printable(std::string_view t) {
    std::string out = "'";
    for (char c : t.substr(0, 40)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    return out + (t.size() > 40 ? "...'" : "'");
  }

 private:
  void skip_space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\n' || s_[at_] == '\t')) ++at_;
  }
  int64_t dimension(std::string_view t) {
    if (!t.empty() && t[0] == '-') {
      refuse(name_, fmt::format("header 'shape' has a negative dimension {}", printable(t)));
    }
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec == std::errc::invalid_argument || end != t.data() + t.size()) {
      refuse(name_, fmt::format("header 'shape' has {}, not a non-negative integer", printable(t)));
    }
    if (ec == std::errc::result_out_of_range) {
      refuse(name_, fmt::format("header 'shape' has {}, larger than a 64-bit size", printable(t)));
    }
    return v;
  }

  std::string_view s_;
  const std::string& name_;
  size_t at_ = 0;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + (shape.size() == 1 ? ",)" : ")");
}

// The bytes a process may use: physical memory, or less under an address-space limit.
uint64_t memory_limit_bytes() {
  uint64_t limit = std::numeric_limits<uint64_t>::max();
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) limit = uint64_t(pages) * uint64_t(page);
  struct rlimit r {};
  if (::getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
    limit = std::min<uint64_t>(limit, r.rlim_cur);
  }
  return limit;
}

// The brain's field and its attractor bank (one field-sized slot per attractor) are a lower
// bound on what building it allocates; refusing here beats a failed 100 GB allocation.
void check_brain_fits(const BrainConfig& c, const std::string& path) {
  const uint64_t R = uint64_t(c.resolution);  // <= 128 after validate: no overflow below
  const uint64_t need = (uint64_t(c.attractor_capacity) + 1) * kFieldChannels * R * R * R * 4;
  const uint64_t have = memory_limit_bytes();
  if (need > have) {
    refuse(path, fmt::format("\"brain\": resolution = {} with attractor_capacity = {} needs at "
                             "least {:.1f} GiB (the field and {} attractor slots of 64 x {}^3 "
                             "float32), more than the {:.1f} GiB this process may use",
                             c.resolution, c.attractor_capacity, need / double(1ull << 30),
                             c.attractor_capacity, c.resolution, have / double(1ull << 30)));
  }
}

// session.json's integer field `key`: `fallback` when absent (< 0: required), else in [lo, hi].
int64_t int_field(const nlohmann::json& j, const char* key, int64_t lo, int64_t hi,
                  const std::string& path, int64_t fallback = -1) {
  const auto it = j.find(key);
  if (it == j.end()) {
    if (fallback < 0) refuse(path, fmt::format("\"{}\" is missing", key));
    return fallback;
  }
  if (!it->is_number_integer()) {
    refuse(path,
           fmt::format("\"{}\" is {}, not an integer", key, HeaderParser::printable(it->dump())));
  }
  const bool too_large = it->is_number_unsigned() && it->get<uint64_t>() > uint64_t(hi);
  const int64_t v = too_large ? hi : it->get<int64_t>();
  if (too_large || v < lo || v > hi) {
    refuse(path, fmt::format("\"{}\" = {} is out of range [{}, {}]", key, it->dump(), lo, hi));
  }
  return v;
}

uint64_t key_hash_field(const nlohmann::json& j, const std::string& path) {
  const auto it = j.find("key_hash");
  if (it == j.end()) refuse(path, "\"key_hash\" is missing");
  if (!it->is_string()) refuse(path, "\"key_hash\" is not a string (a decimal 64-bit integer)");
  const std::string& s = it->get_ref<const std::string&>();
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    refuse(path, fmt::format("\"key_hash\" is {}, not a decimal 64-bit unsigned integer",
                             HeaderParser::printable(s)));
  }
  return v;
}

// A recording's arrays are float32 (the recorder writes nothing else).
void require_float32(const NpyHeader& h, const std::string& name) {
  if (h.type != NpyType::Float32) {
    refuse(name, fmt::format("header 'descr' is '{}', expected '<f4' (little-endian float32)",
                             h.type == NpyType::Float64 ? "<f8" : "<i8"));
  }
}

}  // namespace

NpyHeader parse_npy_header(std::string_view head, uint64_t file_size, const std::string& name) {
  if (head.size() < 10 || std::memcmp(head.data(), "\x93NUMPY", 6) != 0) {
    refuse(name, "not a .npy file (no \\x93NUMPY magic)");
  }
  const auto byte = [&](size_t i) { return uint32_t(static_cast<unsigned char>(head[i])); };
  const uint32_t major = byte(6);
  size_t prefix = 0;
  uint32_t header_len = 0;
  if (major == 1) {
    prefix = 10;
    header_len = byte(8) | (byte(9) << 8);
  } else if (major == 2 || major == 3) {
    if (head.size() < 12) refuse(name, "truncated .npy preamble");
    prefix = 12;
    header_len = byte(8) | (byte(9) << 8) | (byte(10) << 16) | (byte(11) << 24);
  } else {
    refuse(name, fmt::format("unsupported .npy format version {}.{}", major, byte(7)));
  }
  if (header_len > kNpyMaxHead - 12) {
    refuse(name, fmt::format("header length {} is over NumPy's limit of {} bytes", header_len,
                             kNpyMaxHead - 12));
  }
  NpyHeader h;
  h.data_offset = prefix + header_len;
  if (h.data_offset > head.size() || h.data_offset > file_size) {
    refuse(name, fmt::format("the file ends inside its {}-byte header", h.data_offset));
  }

  HeaderParser p(head.substr(prefix, header_len), name);
  std::string descr;
  bool fortran = false, has_descr = false, has_fortran = false, has_shape = false;
  p.expect('{', "'{'");
  while (!p.accept('}')) {
    const std::string key = p.string("key");
    p.expect(':', "':'");
    if (key == "descr" && !has_descr) {
      descr = p.string("'descr'");
      has_descr = true;
    } else if (key == "fortran_order" && !has_fortran) {
      fortran = p.boolean("fortran_order");
      has_fortran = true;
    } else if (key == "shape" && !has_shape) {
      h.shape = p.shape();
      has_shape = true;
    } else {
      refuse(name, fmt::format("header has an unexpected or repeated key {}",
                               HeaderParser::printable(key)));
    }
    if (!p.accept(',')) {
      p.expect('}', "',' or '}'");
      break;
    }
  }
  p.end();
  if (!has_descr || !has_fortran || !has_shape) {
    refuse(name, fmt::format("header lacks '{}'", !has_descr     ? "descr"
                                                  : !has_fortran ? "fortran_order"
                                                                 : "shape"));
  }
  const char* type_name = "float32";
  if (descr == "<f4") {
    h.type = NpyType::Float32, h.item_bytes = 4;
  } else if (descr == "<f8") {
    h.type = NpyType::Float64, h.item_bytes = 8, type_name = "float64";
  } else if (descr == "<i8") {
    h.type = NpyType::Int64, h.item_bytes = 8, type_name = "int64";
  } else {
    refuse(name, fmt::format("header 'descr' is {}, expected '<f4', '<f8' or '<i8' "
                             "(little-endian float32, float64 or int64)",
                             HeaderParser::printable(descr)));
  }
  if (fortran) refuse(name, "header 'fortran_order' is True, expected False (C order)");

  // The values must lie in the file: no product of dimensions is formed before that is known.
  const uint64_t available = (file_size - h.data_offset) / h.item_bytes;
  const bool empty = std::find(h.shape.begin(), h.shape.end(), 0) != h.shape.end();
  h.values = empty ? 0 : 1;
  const auto too_many = [&] {
    refuse(name, fmt::format("header 'shape' {} claims more {} values than the {} bytes "
                             "after its header hold ({} values)",
                             shape_text(h.shape), type_name, file_size - h.data_offset, available));
  };
  for (int64_t d : h.shape) {
    if (empty) break;
    if (h.values > available / uint64_t(d)) too_many();
    h.values *= uint64_t(d);
  }
  if (h.values > available) too_many();  // shape () is one value
  return h;
}

NpyArray parse_npy_f32(std::string_view bytes, const std::string& name) {
  NpyHeader h = parse_npy_header(bytes.substr(0, kNpyMaxHead), bytes.size(), name);
  require_float32(h, name);
  NpyArray a;
  a.shape = std::move(h.shape);
  a.values.resize(size_t(h.values));
  if (h.values > 0)
    std::memcpy(a.values.data(), bytes.data() + h.data_offset, size_t(h.values) * 4);
  return a;
}

NpyArray read_npy_f32(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) refuse(path, "cannot open");
  const std::streamoff size = in.tellg();
  if (size < 0) refuse(path, "cannot read its size");
  std::string head(size_t(std::min<std::streamoff>(size, std::streamoff(kNpyMaxHead))), '\0');
  in.seekg(0);
  in.read(head.data(), std::streamsize(head.size()));
  if (!in) refuse(path, "cannot read its header");
  NpyHeader h = parse_npy_header(head, uint64_t(size), path);
  require_float32(h, path);
  NpyArray a;
  a.shape = std::move(h.shape);
  a.values.resize(size_t(h.values));  // <= the file's size / 4: checked above
  in.seekg(std::streamoff(h.data_offset));
  in.read(reinterpret_cast<char*>(a.values.data()), std::streamsize(h.values * 4));
  if (!in) refuse(path, "read failed before the values its header names");
  return a;
}

Recording parse_session_json(std::string_view text, const std::string& path) {
  Recording r;
  try {
    r.meta = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    refuse(path, std::string("not valid JSON: ") + e.what());
  }
  const nlohmann::json& j = r.meta;
  if (!j.is_object()) refuse(path, "not a JSON object");
  if (const auto f = j.find("format"); f != j.end() && *f != kRecordingFormat) {
    refuse(path, fmt::format("\"format\" is {}, expected \"{}\"",
                             HeaderParser::printable(f->dump()), kRecordingFormat));
  }
  const auto key = j.find("robot_key");
  if (key == j.end() || !key->is_string()) refuse(path, "\"robot_key\" is missing or not a string");
  r.robot_key = key->get<std::string>();
  r.key_hash = key_hash_field(j, path);
  const auto brain = j.find("brain");
  if (brain == j.end() || !brain->is_object())
    refuse(path, "\"brain\" is missing or not an object");
  try {
    r.brain = brain->get<BrainConfig>();  // BrainConfig::validate: the server's bounds
  } catch (const std::exception& e) {
    refuse(path, std::string("\"brain\": ") + e.what());
  }
  // The recorder writes the robot's S and M both at the top and into "brain".
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  r.sensory_dim = int_field(j, "sensory_dim", 1, kMax, path);
  r.motor_dim = int_field(j, "motor_dim", 1, kMax, path);
  if (r.sensory_dim != r.brain.sensory_dim || r.motor_dim != r.brain.motor_dim) {
    refuse(path, fmt::format("\"sensory_dim\" = {} and \"motor_dim\" = {} differ from \"brain\"'s "
                             "{} and {}",
                             r.sensory_dim, r.motor_dim, r.brain.sensory_dim, r.brain.motor_dim));
  }
  r.start_cycle = int_field(j, "start_cycle", 0, kMax, path, 0);
  r.dropped = int_field(j, "dropped", 0, kMax, path, 0);
  r.cycles = int_field(j, "cycles", 0, kMax, path, 0);
  check_brain_fits(r.brain, path);
  return r;
}

BrainConfig replay_brain_config(const Recording& r, const std::string& field_step,
                                const std::string& device) {
  BrainConfig c = r.brain;
  if (field_step.empty() && c.field_step_impl() == FieldStepImpl::ScriptFile) {
    refuse(r.folder + "/session.json",
           fmt::format("\"brain\": field_step = {} names a file; a recording does not choose code "
                       "to load (give it as --field-step to replay with that step)",
                       HeaderParser::printable(c.field_step)));
  }
  if (!field_step.empty()) c.field_step = field_step;
  if (!device.empty()) c.device = device;
  return c;
}

Recording load_recording(const std::string& folder) {
  const std::string session_path = folder + "/session.json";
  std::ifstream in(session_path, std::ios::binary);
  if (!in) refuse(session_path, "cannot open");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Recording r = parse_session_json(text, session_path);
  r.folder = folder;

  NpyArray s = read_npy_f32(folder + "/sensors.npy");
  NpyArray w = read_npy_f32(folder + "/reward.npy");
  NpyArray m = read_npy_f32(folder + "/motors.npy");
  const auto check_shape = [&](const NpyArray& a, const char* file, int64_t tail) {
    const bool ok = tail == 0 ? a.shape.size() == 1 : a.shape.size() == 2 && a.shape[1] == tail;
    if (!ok) {
      refuse(folder + "/" + file,
             fmt::format("header 'shape' {} does not match session.json (expected {})",
                         shape_text(a.shape), tail == 0 ? "(N,)" : fmt::format("(N, {})", tail)));
    }
  };
  check_shape(s, "sensors.npy", r.sensory_dim);
  check_shape(w, "reward.npy", 0);
  check_shape(m, "motors.npy", r.motor_dim);
  // A recording cut short by a crash may have one array ahead of the others; session.json is
  // written after them, so its "cycles" never exceeds what each holds.
  const int64_t rows = std::min({s.shape[0], w.shape[0], m.shape[0]});
  if (r.cycles > rows) {
    refuse(session_path, fmt::format("\"cycles\" = {} but the arrays hold {} rows (sensors {}, "
                                     "reward {}, motors {}): the recording lost data",
                                     r.cycles, rows, s.shape[0], w.shape[0], m.shape[0]));
  }
  r.cycles = rows;
  s.values.resize(size_t(r.cycles * r.sensory_dim));
  w.values.resize(size_t(r.cycles));
  m.values.resize(size_t(r.cycles * r.motor_dim));
  r.sensors = std::move(s.values);
  r.reward = std::move(w.values);
  r.motors = std::move(m.values);
  return r;
}

}  // namespace fieldbrain
