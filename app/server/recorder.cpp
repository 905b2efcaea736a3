#include "app/server/recorder.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "app/server/state_files.h"

namespace fieldbrain::server {

namespace fs = std::filesystem;

namespace {

constexpr size_t kNpyHeaderBytes = 128;  // fixed, so the shape can be rewritten in place

// NumPy format 1.0 header for a little-endian float32 C-order array of shape (rows, tail...).
std::string npy_header(uint64_t rows, int tail) {
  std::string shape = "(" + std::to_string(rows) + (tail > 0 ? ", " + std::to_string(tail) : ",") + ")";
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t body = kNpyHeaderBytes - 10;  // magic(6) + version(2) + length(2)
  dict.resize(body - 1, ' ');
  dict += '\n';
  std::string h = "\x93NUMPY";
  h += '\x01';
  h += '\x00';
  h += static_cast<char>(body & 0xff);
  h += static_cast<char>(body >> 8);
  return h + dict;
}

}  // namespace

// One .npy file growing by rows.
class NpyAppender {
 public:
  NpyAppender(const std::string& path, int tail) : tail_(tail) {
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) throw std::runtime_error("cannot create " + path);
    write_header();
  }
  ~NpyAppender() {
    if (file_) std::fclose(file_);
  }
  void append(const float* data, size_t rows, size_t row_floats, size_t offset, size_t n) {
    std::fseek(file_, 0, SEEK_END);
    for (size_t r = 0; r < rows; ++r) std::fwrite(data + r * row_floats + offset, 4, n, file_);
    rows_ += rows;
    write_header();
  }

 private:
  void write_header() {
    const std::string h = npy_header(rows_, tail_);
    std::fseek(file_, 0, SEEK_SET);
    std::fwrite(h.data(), 1, h.size(), file_);
    std::fflush(file_);
  }
  std::FILE* file_ = nullptr;
  int tail_;
  uint64_t rows_ = 0;
};

namespace {

double epoch_seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void write_json(const fs::path& path, const nlohmann::json& j) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
}

}  // namespace

// The files of a session, opened by the writer thread on its first write.
struct SessionFiles {
  NpyAppender sensors, reward, motors;
  SessionFiles(const fs::path& dir, int S, int M)
      : sensors((dir / "sensors.npy").string(), S),
        reward((dir / "reward.npy").string(), 0),
        motors((dir / "motors.npy").string(), M) {}
};

SessionRecording::SessionRecording(std::string folder, nlohmann::json meta, int S, int M)
    : folder_(std::move(folder)),
      meta_(std::move(meta)),
      S_(S),
      M_(M),
      record_floats_(size_t(S) + 1 + size_t(M)),
      max_cycles_(kMaxBytes / (4 * record_floats_)),
      ring_(kRingCycles * record_floats_),
      out_(kRingCycles * record_floats_) {}

SessionRecording::~SessionRecording() = default;

void SessionRecording::append(const std::vector<float>& sensors, float reward,
                              const std::vector<float>& motors) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (closed_ || accepted_ + dropped_ >= max_cycles_) return;
  if (count_ == kRingCycles) {
    ++dropped_;
    return;
  }
  float* r = ring_.data() + ((head_ + count_) % kRingCycles) * record_floats_;
  for (int i = 0; i < S_; ++i) r[i] = i < int(sensors.size()) ? sensors[i] : 0.0f;
  r[S_] = reward;
  for (int i = 0; i < M_; ++i) r[S_ + 1 + i] = i < int(motors.size()) ? motors[i] : 0.0f;
  ++count_;
  ++accepted_;
}

void SessionRecording::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
}

Recorder::Recorder(std::string dir, nlohmann::json brain) : dir_(std::move(dir)), brain_(std::move(brain)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_)) {
    throw std::runtime_error("record_dir '" + dir_ + "' cannot be created: " + ec.message());
  }
  writer_ = std::thread([this] { run(); });
}

Recorder::~Recorder() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  writer_.join();
}

std::shared_ptr<SessionRecording> Recorder::open(const std::string& robot_key, uint64_t key_hash,
                                                 int sensory_dim, int motor_dim,
                                                 int64_t start_cycle) {
  const double now = epoch_seconds_now();
  std::string folder = state_path(dir_, robot_key, "") + "-" + std::to_string(int64_t(now));
  for (int n = 2; fs::exists(folder) && n < 1000; ++n) {
    folder = state_path(dir_, robot_key, "") + "-" + std::to_string(int64_t(now)) + "-" +
             std::to_string(n);
  }
  std::error_code ec;
  if (!fs::create_directory(folder, ec)) {
    spdlog::error("{}: not recorded: cannot create {}: {}", robot_key, folder, ec.message());
    return nullptr;
  }
  nlohmann::json brain = brain_.is_object() ? brain_ : nlohmann::json::object();
  brain["sensory_dim"] = sensory_dim;
  brain["motor_dim"] = motor_dim;
  nlohmann::json meta = {{"format", "fieldbrain-recording-1"},
                         {"robot_key", robot_key},
                         {"key_hash", std::to_string(key_hash)},
                         {"sensory_dim", sensory_dim},
                         {"motor_dim", motor_dim},
                         {"brain", brain},
                         {"start_cycle", start_cycle},
                         {"started_at", now},
                         {"cycles", 0},
                         {"dropped", 0},
                         {"truncated", false},
                         {"complete", false}};
  write_json(fs::path(folder) / "session.json", meta);
  std::shared_ptr<SessionRecording> s(
      new SessionRecording(folder, std::move(meta), sensory_dim, motor_dim));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    sessions_.push_back(s);
  }
  spdlog::info("{}: recording to {}", robot_key, folder);
  return s;
}

void Recorder::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    const bool stopping = stopping_;
    std::vector<std::shared_ptr<SessionRecording>> sessions = sessions_;
    lock.unlock();
    for (auto& s : sessions) write_pending(*s);
    lock.lock();
    sessions_.erase(std::remove_if(sessions_.begin(), sessions_.end(),
                                   [](const auto& s) { return s->finished_; }),
                    sessions_.end());
    if (stopping) break;
    wake_.wait_for(lock, std::chrono::milliseconds(50), [this] { return stopping_; });
  }
  // Stopping: whatever is still open is finished as it stands.
  std::vector<std::shared_ptr<SessionRecording>> rest = sessions_;
  lock.unlock();
  for (auto& s : rest) {
    s->close();
    write_pending(*s);
  }
}

void Recorder::write_pending(SessionRecording& s) {
  if (s.finished_) return;
  size_t n = 0;
  bool closed = false;
  uint64_t dropped = 0, accepted = 0;
  {
    std::lock_guard<std::mutex> lock(s.mutex_);
    for (; n < s.count_; ++n) {
      const float* r = s.ring_.data() + ((s.head_ + n) % SessionRecording::kRingCycles) * s.record_floats_;
      std::copy(r, r + s.record_floats_, s.out_.data() + n * s.record_floats_);
    }
    s.head_ = (s.head_ + n) % SessionRecording::kRingCycles;
    s.count_ = 0;
    closed = s.closed_;
    dropped = s.dropped_;
    accepted = s.accepted_;
  }
  try {
    if (!s.files_) s.files_ = std::make_unique<SessionFiles>(s.folder_, s.S_, s.M_);
    if (n > 0) {
      SessionFiles& f = *s.files_;
      f.sensors.append(s.out_.data(), n, s.record_floats_, 0, size_t(s.S_));
      f.reward.append(s.out_.data(), n, s.record_floats_, size_t(s.S_), 1);
      f.motors.append(s.out_.data(), n, s.record_floats_, size_t(s.S_) + 1, size_t(s.M_));
      s.written_ += n;
    }
    const bool truncated = accepted + dropped >= s.max_cycles_;
    if (closed || n > 0) {
      s.meta_["cycles"] = s.written_;
      s.meta_["dropped"] = dropped;
      s.meta_["truncated"] = truncated;
      s.meta_["complete"] = closed;
      write_json(fs::path(s.folder_) / "session.json", s.meta_);
    }
    if (closed) {
      s.files_.reset();
      s.finished_ = true;
      spdlog::info("{}: recording closed: {} cycles in {}{}{}", s.meta_.value("robot_key", ""),
                   s.written_, s.folder_, dropped ? fmt::format(", {} dropped", dropped) : "",
                   truncated ? " (size limit reached)" : "");
    }
  } catch (const std::exception& e) {
    spdlog::error("recording {}: {}; recording of this session stops", s.folder_, e.what());
    std::lock_guard<std::mutex> lock(s.mutex_);
    s.closed_ = true;
    s.finished_ = true;
  }
}

}  // namespace fieldbrain::server
