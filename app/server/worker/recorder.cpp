#include "app/server/worker/recorder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "app/server/stats/descriptor_reserve.h"
#include "app/server/worker/state_files.h"

namespace fieldbrain::server {

namespace fs = std::filesystem;

namespace {

constexpr size_t kNpyHeaderBytes = 128;  // fixed, so the shape can be rewritten in place
// A new session needs this much of record_max_bytes left (its session.json, three headers
// and some cycles), so a nearly spent budget does not start sessions of a few cycles each.
constexpr int64_t kMinSessionBytes = 64 * 1024;

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

// One .npy file growing by rows. Its header always states the rows that are wholly on disk:
// rows are written (pwrite, no stdio buffer to replay a failed write later) right after the
// last good one, and a write that fails is cut back.
class NpyAppender {
 public:
  NpyAppender(const std::string& path, int tail)
      : path_(path), tail_(tail), row_bytes_(4 * static_cast<uint64_t>(tail > 0 ? tail : 1)) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("cannot create");
    if (!write_header()) {
      const int err = errno;
      ::close(fd_);
      fd_ = -1;
      errno = err;
      fail("cannot write the header of");
    }
  }
  ~NpyAppender() {
    if (fd_ >= 0) ::close(fd_);
  }
  uint64_t rows() const { return rows_; }
  // Appends `rows` rows (n floats from `offset` of each record); on failure the file is left
  // as it was (rows() unchanged) and std::runtime_error says why.
  void append(const float* data, size_t rows, size_t row_floats, size_t offset, size_t n) {
    buf_.resize(rows * n);
    for (size_t r = 0; r < rows; ++r) {
      std::copy(data + r * row_floats + offset, data + r * row_floats + offset + n,
                buf_.begin() + r * n);
    }
    if (!write_all(buf_.data(), buf_.size() * 4, kNpyHeaderBytes + rows_ * row_bytes_)) {
      const int err = errno;
      cut_to(rows_);
      errno = err;
      fail("cannot append to");
    }
    rows_ += rows;
    if (!write_header()) {
      const int err = errno;
      cut_to(rows_ - rows);
      errno = err;
      fail("cannot update the header of");
    }
  }
  // Cuts the file back to its first `rows` rows and says so in the header.
  void cut_to(uint64_t rows) {
    rows_ = rows;
    if (::ftruncate(fd_, static_cast<off_t>(kNpyHeaderBytes + rows_ * row_bytes_)) != 0) {
      spdlog::error("recording: cannot cut {} back to {} rows: {}", path_, rows_,
                    std::strerror(errno));
    }
    write_header();
  }

 private:
  [[noreturn]] void fail(const char* what) {
    throw std::runtime_error(std::string(what) + " " + path_ + ": " +
                             (errno ? std::strerror(errno) : "write failed"));
  }
  bool write_all(const void* data, size_t bytes, uint64_t at) {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
      const ssize_t n = ::pwrite(fd_, p, bytes, static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        if (n == 0) errno = ENOSPC;
        return false;
      }
      p += n;
      at += static_cast<uint64_t>(n);
      bytes -= static_cast<size_t>(n);
    }
    return true;
  }
  bool write_header() {
    const std::string h = npy_header(rows_, tail_);
    return write_all(h.data(), h.size(), 0);
  }
  std::string path_;
  int fd_ = -1;
  int tail_;
  uint64_t row_bytes_;
  uint64_t rows_ = 0;
  std::vector<float> buf_;
};

namespace {

double epoch_seconds_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// session.json's bytes: its JSON, then spaces (valid JSON whitespace) up to a whole 4 KiB
// with at least 1 KiB to spare. Every version of the file is that long, so a later one (a few
// more fields: "cycles", "error") fits in the blocks the file already holds (write_json).
std::string session_json_text(const nlohmann::json& j) {
  std::string text = j.dump(2) + "\n";
  const size_t padded = (text.size() + 1024 + 4095) / 4096 * 4096;
  text.append(padded - text.size(), ' ');
  text.back() = '\n';
  return text;
}

// Overwrites `path` in place with `text` when it fits in the file's present size: no block is
// allocated, so this works on a full disk (not on copy-on-write filesystems such as btrfs).
// Not atomic, so only the fallback of write_json. Returns false when it could not.
bool overwrite_in_place(const fs::path& path, std::string text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && text.size() <= static_cast<size_t>(st.st_size);
  if (ok) {
    text.append(static_cast<size_t>(st.st_size) - text.size(), ' ');
    text.back() = '\n';
    ok = ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()) &&
         ::fsync(fd) == 0;
  }
  ::close(fd);
  return ok;
}

// Replaces `path` by a complete file (temporary file, then rename). On a full disk that fails,
// and the last word a stopped recording has, its "error", would be lost while the disk stays
// full: then the existing file is overwritten in place (session_json_text keeps room for it).
void write_json(const fs::path& path, const nlohmann::json& j) {
  const std::string text = session_json_text(j);
  const fs::path tmp = path.string() + ".tmp";
  bool ok;
  {
    std::ofstream out(tmp);
    out << text;
    out.flush();
    ok = static_cast<bool>(out);
  }
  std::error_code ec;
  if (!ok) {
    const int err = errno;
    fs::remove(tmp, ec);
    if (overwrite_in_place(path, text)) return;
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(err));
  }
  fs::rename(tmp, path, ec);
  if (ec) throw std::runtime_error("cannot replace " + path.string() + ": " + ec.message());
}

// Bytes of the files under `dir` and the folders directly in it (what a budget counts).
void measure(const std::string& dir, int64_t* bytes, int* folders) {
  *bytes = 0;
  *folders = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    if (it->is_directory(e2)) {
      if (it.depth() == 0) ++*folders;
    } else if (it->is_regular_file(e2)) {
      const auto n = it->file_size(e2);
      if (!e2) *bytes += static_cast<int64_t>(n);
    }
  }
}

}  // namespace

// The files of a session, opened by the writer thread on its first write.
struct SessionFiles {
  NpyAppender sensors, reward, motors;
  SessionFiles(const fs::path& dir, int S, int M)
      : sensors((dir / "sensors.npy").string(), S),
        reward((dir / "reward.npy").string(), 0),
        motors((dir / "motors.npy").string(), M) {}
  // After a failed append: all three back to the cycles each of them holds.
  uint64_t cut_to_common() {
    const uint64_t rows = std::min({sensors.rows(), reward.rows(), motors.rows()});
    for (NpyAppender* f : {&sensors, &reward, &motors}) {
      if (f->rows() > rows) f->cut_to(rows);
    }
    return rows;
  }
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

Recorder::Recorder(std::string dir, nlohmann::json brain, RecorderLimits limits)
    : dir_(std::move(dir)), brain_(std::move(brain)), limits_(limits) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_)) {
    throw std::runtime_error("record_dir '" + dir_ + "' cannot be created: " + ec.message());
  }
  int64_t bytes = 0;
  int folders = 0;
  measure(dir_, &bytes, &folders);
  bytes_used_ = bytes;
  folders_ = folders;
  if (folders >= limits_.max_sessions || bytes >= limits_.max_bytes) {
    spdlog::warn("record_dir {} is full ({} sessions of record_max_sessions = {}, {} bytes of "
                 "record_max_bytes = {}): no session will be recorded until it is emptied",
                 dir_, folders, limits_.max_sessions, bytes, limits_.max_bytes);
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
  if (folders_.load() >= limits_.max_sessions) {
    refused(robot_key, std::to_string(folders_.load()) + " sessions, record_max_sessions = " +
                           std::to_string(limits_.max_sessions));
    return nullptr;
  }
  if (bytes_used_.load() + kMinSessionBytes > limits_.max_bytes) {
    refused(robot_key, std::to_string(bytes_used_.load()) + " bytes, record_max_bytes = " +
                           std::to_string(limits_.max_bytes));
    return nullptr;
  }
  if (descriptors_low(limits_.fd_reserve)) {
    refused(robot_key, "fewer than fd_reserve = " + std::to_string(limits_.fd_reserve) +
                           " file descriptors free");
    return nullptr;
  }
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
  ++folders_;
  try {
    write_json(fs::path(folder) / "session.json", meta);
  } catch (const std::exception& e) {
    spdlog::error("{}: not recorded: {}", robot_key, e.what());
    std::error_code ignored;
    fs::remove_all(folder, ignored);
    --folders_;
    return nullptr;
  }
  bytes_used_ += 4096;  // session.json (padded to 4 KiB, write_json)
  std::shared_ptr<SessionRecording> s(
      new SessionRecording(folder, std::move(meta), sensory_dim, motor_dim));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    sessions_.push_back(s);
  }
  spdlog::info("{}: recording to {}", robot_key, folder);
  return s;
}

void Recorder::refused(const std::string& robot_key, const std::string& why) {
  std::lock_guard<std::mutex> lock(refused_mutex_);
  ++refused_count_;
  const auto now = std::chrono::steady_clock::now();
  if (refused_logged_ != std::chrono::steady_clock::time_point{} &&
      now - refused_logged_ < std::chrono::seconds(10)) {
    return;
  }
  refused_logged_ = now;
  spdlog::warn("{}: not recorded: {} is at its budget ({}); {} session(s) not recorded in the "
               "last 10 s",
               robot_key, dir_, why, refused_count_);
  refused_count_ = 0;
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
  const uint64_t row_bytes = 4 * s.record_floats_;
  std::string stopped;  // why this session stops early ("" = it does not)
  if (n > 0 && bytes_used_.load() + static_cast<int64_t>(n * row_bytes) > limits_.max_bytes) {
    // The directory's byte budget: what fits is written, then the session stops.
    const int64_t room = std::max<int64_t>(0, limits_.max_bytes - bytes_used_.load());
    n = std::min<size_t>(n, static_cast<size_t>(room / static_cast<int64_t>(row_bytes)));
    stopped = "record_max_bytes";
  }
  try {
    if (!s.files_) s.files_ = std::make_unique<SessionFiles>(s.folder_, s.S_, s.M_);
    if (n > 0) {
      SessionFiles& f = *s.files_;
      try {
        f.sensors.append(s.out_.data(), n, s.record_floats_, 0, size_t(s.S_));
        f.reward.append(s.out_.data(), n, s.record_floats_, size_t(s.S_), 1);
        f.motors.append(s.out_.data(), n, s.record_floats_, size_t(s.S_) + 1, size_t(s.M_));
      } catch (...) {
        s.written_ = f.cut_to_common();
        throw;
      }
      s.written_ += n;
      bytes_used_ += static_cast<int64_t>(n * row_bytes);
    }
    const bool truncated = accepted + dropped >= s.max_cycles_ || !stopped.empty();
    if (!stopped.empty()) closed = true;
    if (closed || n > 0) {
      s.meta_["cycles"] = s.written_;
      s.meta_["dropped"] = dropped;
      s.meta_["truncated"] = truncated;
      s.meta_["complete"] = closed;
      if (!stopped.empty()) s.meta_["stopped"] = stopped;
      write_json(fs::path(s.folder_) / "session.json", s.meta_);
    }
    if (closed) {
      s.files_.reset();
      s.finished_ = true;
      if (!stopped.empty()) {
        spdlog::warn("{}: recording stopped: {} is at record_max_bytes = {}; {} cycles in {}",
                     s.meta_.value("robot_key", ""), dir_, limits_.max_bytes, s.written_,
                     s.folder_);
      } else {
        spdlog::info("{}: recording closed: {} cycles in {}{}{}", s.meta_.value("robot_key", ""),
                     s.written_, s.folder_, dropped ? fmt::format(", {} dropped", dropped) : "",
                     truncated ? " (size limit reached)" : "");
      }
    }
  } catch (const std::exception& e) {
    // The files stay valid up to s.written_ cycles; session.json says so if it can still be
    // written (if not, the previous one stays, with no more cycles than are on disk).
    s.files_.reset();
    s.meta_["cycles"] = s.written_;
    s.meta_["dropped"] = dropped;
    s.meta_["complete"] = false;
    s.meta_["error"] = e.what();
    try {
      write_json(fs::path(s.folder_) / "session.json", s.meta_);
    } catch (const std::exception&) {
    }
    spdlog::error("{}: recording stopped: {}; {} cycles kept in {} (its files are valid up to "
                  "there)",
                  s.meta_.value("robot_key", ""), e.what(), s.written_, s.folder_);
    std::lock_guard<std::mutex> lock(s.mutex_);
    s.closed_ = true;
    s.finished_ = true;
  }
}

}  // namespace fieldbrain::server
