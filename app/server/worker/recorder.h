// Session recording (`fieldbrain-server --record DIR`, config key `record_dir`): everything
// needed to replay one robot's connection through a fresh brain (`fieldbrain replay`, or the
// Python reference's `replay`). Each connection gets its own folder
//   DIR/<robot key>-<unix time>/
//     session.json   robot key, its 64-bit key hash, S, M, the brain config the robot's brain
//                    was built from (seed included), the brain cycle it started at, the
//                    cycles written, cycles dropped, whether the size limit cut it short
//     sensors.npy    [N,S] float32    what the brain was given, cycle by cycle
//     reward.npy     [N]   float32
//     motors.npy     [N,M] float32    what the robot was sent
// NumPy .npy files (numpy.load reads them) whose header is rewritten after every append, so
// the files are valid at any moment, also after a crash (up to the last write).
//
// Never slows the tick: append() copies one cycle into a preallocated per-session ring under
// a mutex the writer holds only to copy out; a writer thread does all file I/O. If the disk
// falls behind by more than the ring (1024 cycles), cycles are dropped and counted (the
// session then says so and replay refuses it). A session stops recording at 256 MiB.
//
// Write errors and budgets (issue 24 item 3, docs/operating.md "Limits"):
// - A failed write (a full disk, EFBIG, EIO) stops that recording with an error in the log
//   ("recording stopped"); its three .npy files are cut back to the last cycle all of them
//   hold, their headers say exactly that, and session.json says "cycles" = that count and
//   "error" = why. session.json is replaced only by a complete write (never left empty);
//   when the disk is full even for that, it is overwritten in place: it is padded with
//   spaces (valid JSON) to a whole 4 KiB with 1 KiB to spare, so the version that says
//   "error" fits in the blocks it already holds (issue 36 item 6a).
// - The whole directory has a budget: `max_sessions` folders (those of earlier runs count)
//   and `max_bytes` of files. At the folder budget, or with less than 64 KiB of the byte
//   budget left, a new session is not recorded (the robot runs as usual; one log line per 10 s says so); a session being
//   written stops at the byte budget like at its size limit ("truncated": true,
//   "stopped": "record_max_bytes"). Nothing is ever deleted to make room.
// - A session is not recorded while fewer than `fd_reserve` descriptors are free (each open
//   recording holds three).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace fieldbrain::server {

class SessionRecording;
struct SessionFiles;

struct RecorderLimits {
  int64_t max_bytes = int64_t{4} << 30;  // record_max_bytes: every file under the directory
  int max_sessions = 1000;               // record_max_sessions: folders under the directory
  int fd_reserve = 64;                   // fd_reserve: descriptors to leave free
};

class Recorder {
 public:
  // `dir` is created if needed (throws std::runtime_error naming it when that fails), and
  // what it already holds counts against `limits`; `brain` is the server config's "brain"
  // object, stored in every session.json.
  Recorder(std::string dir, nlohmann::json brain, RecorderLimits limits = {});
  ~Recorder();  // writes what is buffered, closes every session, joins the writer
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // A new session for a robot that has just attached (its brain at `start_cycle`). Returns
  // null (and logs why) when the folder cannot be created or a budget is spent: recording
  // never stops a robot.
  std::shared_ptr<SessionRecording> open(const std::string& robot_key, uint64_t key_hash,
                                         int sensory_dim, int motor_dim, int64_t start_cycle);

  const std::string& dir() const { return dir_; }
  int64_t bytes_used() const { return bytes_used_.load(); }

 private:
  void run();
  void write_pending(SessionRecording& s);
  // Logs a refused session at most once per 10 s, with the number refused.
  void refused(const std::string& robot_key, const std::string& why);

  std::string dir_;
  nlohmann::json brain_;
  RecorderLimits limits_;
  std::atomic<int64_t> bytes_used_{0};
  std::atomic<int> folders_{0};
  std::mutex refused_mutex_;
  std::chrono::steady_clock::time_point refused_logged_{};
  uint64_t refused_count_ = 0;
  std::mutex mutex_;  // guards sessions_ and stopping_
  std::condition_variable wake_;
  std::vector<std::shared_ptr<SessionRecording>> sessions_;
  bool stopping_ = false;
  std::thread writer_;
};

class SessionRecording {
 public:
  static constexpr size_t kRingCycles = 1024;
  static constexpr uint64_t kMaxBytes = uint64_t{256} << 20;

  // Brain worker thread. sensors: S values, motors: M values (others are ignored). No I/O,
  // no allocation.
  void append(const std::vector<float>& sensors, float reward, const std::vector<float>& motors);
  // Brain worker thread: the robot detached; the writer finishes the files.
  void close();

  const std::string& folder() const { return folder_; }
  ~SessionRecording();

 private:
  friend class Recorder;
  SessionRecording(std::string folder, nlohmann::json meta, int S, int M);

  const std::string folder_;
  nlohmann::json meta_;  // writer thread only
  const int S_, M_;
  const size_t record_floats_;  // S + 1 + M
  uint64_t max_cycles_;

  std::mutex mutex_;
  std::vector<float> ring_;  // kRingCycles records
  size_t head_ = 0, count_ = 0;
  uint64_t accepted_ = 0, dropped_ = 0;
  bool closed_ = false;

  // Writer thread only.
  std::vector<float> out_;
  std::unique_ptr<SessionFiles> files_;  // created on the first write
  uint64_t written_ = 0;
  bool finished_ = false;
};

}  // namespace fieldbrain::server
