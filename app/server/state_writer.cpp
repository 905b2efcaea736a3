#include "app/server/state_writer.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "app/server/handshake.h"
#include "app/server/identity_store.h"

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
                        bool final_save, std::function<void()> done) {
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
      replaced_done = std::move(job.done);
      job.done = std::move(done);
    } else {
      queued_[file] = Job{robot_key, std::move(snapshot), final_save, std::move(done)};
      order_.push_back(file);
    }
  }
  wake_.notify_one();
  if (replaced_done) replaced_done();
}

void StateWriter::write_identities(std::string content) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    identities_ = std::move(content);
    identities_queued_ = true;
  }
  wake_.notify_one();
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
    std::string file, identities;
    Job job;
    bool write_ids = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !order_.empty() || identities_queued_; });
      if (identities_queued_) {
        write_ids = true;
        identities.swap(identities_);
        identities_queued_ = false;
      } else if (!order_.empty()) {
        file = order_.front();
        order_.pop_front();
        job = std::move(queued_.at(file));
        queued_.erase(file);
        running_ = file;
      } else {
        break;  // stopping and nothing left
      }
    }
    if (write_ids) {
      write_identity_file(identities);
      continue;
    }
    write_one(file, job);
    job.snapshot = nullptr;  // release what it held (a brain that has left)
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_.clear();
    }
    written_.notify_all();
    if (job.done) job.done();
    if (max_bytes_ > 0) enforce_budget();
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
  } catch (const std::exception& e) {
    stats_.error(kCodePersistenceSave, job.robot_key,
                 std::string("save to ") + path + " failed: " + e.what());
    std::lock_guard<std::mutex> lock(mutex_);
    if (job.final_save) unsaved_.insert(job.robot_key);
  }
}

void StateWriter::write_identity_file(const std::string& content) {
  const fs::path path = fs::path(dir_) / IdentityStore::kFileName;
  const fs::path tmp = fs::path(path.string() + ".tmp-" + std::to_string(::getpid()));
  try {
    // Small file: write, fsync, rename (the same recipe as the brain saves).
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot create " + tmp.string());
    const bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size() &&
                    std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
    std::fclose(f);
    if (!ok) throw std::runtime_error("cannot write " + tmp.string());
    fs::rename(tmp, path);
  } catch (const std::exception& e) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    stats_.error(kCodePersistenceSave, "identities",
                 std::string("writing ") + path.string() + " failed: " + e.what());
  }
}

void StateWriter::enforce_budget() {
  struct Entry {
    fs::path path;
    int64_t bytes;
    fs::file_time_type written;
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
    files.push_back({it->path(), bytes, it->last_write_time(e2)});
  }
  if (total <= max_bytes_) return;
  std::sort(files.begin(), files.end(),
            [](const Entry& a, const Entry& b) { return a.written < b.written; });
  for (const Entry& f : files) {
    if (total <= max_bytes_) break;
    const std::string name = f.path.filename().string();
    if (name.find(".tmp-") != std::string::npos) continue;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (pinned_.count(name) || queued_.count(name) || running_ == name) continue;
    }
    std::error_code rm;
    if (fs::remove(f.path, rm)) {
      total -= f.bytes;
      spdlog::warn(
          "state dir over its budget of {} bytes: deleted {} ({} bytes, a robot that "
          "is not connected)",
          max_bytes_, f.path.string(), f.bytes);
      std::lock_guard<std::mutex> lock(mutex_);
      ++evicted_;
    }
  }
  if (total > max_bytes_) {
    spdlog::warn("state dir holds {} bytes, over its budget of {}, all of it live robots' saves",
                 total, max_bytes_);
  }
}

}  // namespace fieldbrain::server
