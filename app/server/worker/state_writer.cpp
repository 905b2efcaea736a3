#include "app/server/worker/state_writer.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "app/server/protocol/handshake.h"
#include "app/server/worker/identity_store.h"

namespace fieldbrain::server {

namespace fs = std::filesystem;

StateWriter::StateWriter(std::string dir, int64_t max_bytes, ServerStats& stats)
    : dir_(std::move(dir)), max_bytes_(max_bytes), stats_(stats) {}

StateWriter::~StateWriter() { stop(); }

void StateWriter::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (started_) return;
  started_ = true;
  thread_ = std::thread([this] { run(); });
}

void StateWriter::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StateWriter::write(const std::string& file, const std::string& robot_key, Snapshot snapshot,
                        bool final_save, std::function<void()> done, int64_t cycles) {
  std::function<void()> replaced_done;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = queued_.find(file);
    if (it != queued_.end()) {
      // Only the newest state matters; a final save stays final.
      Job& job = it->second;
      job.snapshot = std::move(snapshot);
      job.robot_key = robot_key;
      job.final_save = job.final_save || final_save;
      job.cycles = cycles;
      replaced_done = std::move(job.done);
      job.done = std::move(done);
    } else {
      queued_[file] = Job{robot_key, std::move(snapshot), final_save, std::move(done), cycles};
      order_.push_back(file);
    }
  }
  wake_.notify_one();
  if (replaced_done) replaced_done();
}

bool StateWriter::pending(const std::string& file) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_ == file || queued_.count(file) > 0;
}

void StateWriter::wait_written(const std::string& file) {
  std::unique_lock<std::mutex> lock(mutex_);
  written_.wait(lock, [&] { return running_ != file && queued_.count(file) == 0; });
}

void StateWriter::pin(const std::string& file) {
  std::lock_guard<std::mutex> lock(mutex_);
  pinned_.insert(file);
}

void StateWriter::unpin(const std::string& file) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = pinned_.find(file);
  if (it != pinned_.end()) pinned_.erase(it);
}

void StateWriter::mark_unsaved(const std::string& robot_key) {
  std::lock_guard<std::mutex> lock(mutex_);
  unsaved_.insert(robot_key);
}

uint64_t StateWriter::writes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return writes_;
}

std::vector<std::string> StateWriter::unsaved() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {unsaved_.begin(), unsaved_.end()};
}

int64_t StateWriter::evicted_files() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return evicted_;
}

void StateWriter::run() {
  for (;;) {
    std::string file;
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !order_.empty(); });
      if (!order_.empty()) {
        file = order_.front();
        order_.pop_front();
        job = std::move(queued_.at(file));
        queued_.erase(file);
        running_ = file;
      } else {
        break;  // stopping and nothing left
      }
    }
    write_one(file, job);
    job.snapshot = nullptr;  // release what it held (a brain that has left)
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_.clear();
    }
    written_.notify_all();
    if (job.done) job.done();
    if (max_bytes_ > 0) enforce_budget(file, job.cycles);
  }
}

void StateWriter::write_one(const std::string& file, Job& job) {
  const std::string path = (fs::path(dir_) / file).string();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    job.snapshot(path);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    spdlog::debug("{}: saved to {} in {:.0f} ms", job.robot_key, path, ms);
    std::lock_guard<std::mutex> lock(mutex_);
    ++writes_;
    if (job.final_save) unsaved_.erase(job.robot_key);
    if (job.cycles >= 0) {
      cycles_[file] = job.cycles;
    } else {
      cycles_.erase(file);
    }
  } catch (const std::exception& e) {
    stats_.error(kCodePersistenceSave, job.robot_key,
                 std::string("save to ") + path + " failed: " + e.what());
    std::lock_guard<std::mutex> lock(mutex_);
    if (job.final_save) unsaved_.insert(job.robot_key);
  }
}

void StateWriter::enforce_budget(const std::string& written, int64_t written_cycles) {
  // Worth of a save: its brain cycles when this process wrote it; an older run's save is
  // unknown and counts as the most trained (kept until nothing of known worth is left).
  constexpr int64_t kUnknown = INT64_MAX;
  struct Entry {
    fs::path path;
    int64_t bytes;
    fs::file_time_type written;
    int64_t cycles;
  };
  std::vector<Entry> files;
  int64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code e2;
    // The budget is for saves; the identity file (a few bytes per robot) is never deleted.
    if (!it->is_regular_file(e2) || it->path().filename() == IdentityStore::kFileName) continue;
    const auto bytes = static_cast<int64_t>(it->file_size(e2));
    if (e2) continue;
    total += bytes;
    files.push_back({it->path(), bytes, it->last_write_time(e2), kUnknown});
  }
  if (total <= max_bytes_) return;
  const int64_t newcomer = written_cycles >= 0 ? written_cycles : kUnknown;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Entry& f : files) {
      auto known = cycles_.find(f.path.filename().string());
      if (known != cycles_.end()) f.cycles = known->second;
    }
  }
  std::sort(files.begin(), files.end(), [](const Entry& a, const Entry& b) {
    return a.cycles != b.cycles ? a.cycles < b.cycles : a.written < b.written;
  });
  int kept_for_worth = 0;
  for (const Entry& f : files) {
    if (total <= max_bytes_) break;
    const std::string name = f.path.filename().string();
    if (name.find(".tmp-") != std::string::npos) continue;
    if (f.cycles > newcomer) {
      ++kept_for_worth;  // more trained than the save that went over: never its victim
      continue;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (pinned_.count(name) || queued_.count(name) || running_ == name) continue;
    }
    std::error_code rm;
    if (fs::remove(f.path, rm)) {
      total -= f.bytes;
      spdlog::warn(
          "state dir over its budget of {} bytes: deleted {} ({} bytes, {}, a robot that is "
          "not connected)",
          max_bytes_, f.path.string(), f.bytes,
          f.cycles == kUnknown ? std::string("a save of an earlier run")
                               : std::to_string(f.cycles) + " cycles");
      std::lock_guard<std::mutex> lock(mutex_);
      ++evicted_;
      cycles_.erase(name);
    }
  }
  if (total > max_bytes_) {
    spdlog::warn(
        "state dir holds {} bytes, over its budget of {}: the rest are live robots' saves{}",
        total, max_bytes_,
        kept_for_worth > 0 ? fmt::format(" and {} saves more trained than {} (never evicted "
                                         "for a less trained one)",
                                         kept_for_worth, written)
                           : std::string());
  }
}

}  // namespace fieldbrain::server
