#include "brain/legacy/pattern_discovery.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>

namespace fieldbrain::legacy {

namespace {

constexpr int kCandidates = 32;  // discover_async's n_candidates

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// "off": requests are dropped (the cycle counts them), no pattern ever arrives.
class OffDiscovery final : public PatternDiscovery {
 public:
  LegacyPlanner mode() const override { return LegacyPlanner::Off; }
  void request(const torch::Tensor&, at::Generator&, double) override {}
  std::optional<StrategicPattern> take_finished() override { return std::nullopt; }
  std::vector<StrategicPattern> library() const override { return {}; }
  void restore_library(std::vector<StrategicPattern>) override {}
  int64_t discoveries() const override { return 0; }
  double last_discovery_seconds() const override { return 0.0; }
};

// "sync": the discovery runs inside request(), on the cycle's thread and generator, as
// run_original.py --planner sync runs the original's.
class SyncDiscovery final : public PatternDiscovery {
 public:
  explicit SyncDiscovery(int64_t R) : planner_(R) {}
  LegacyPlanner mode() const override { return LegacyPlanner::Sync; }
  void request(const torch::Tensor& field, at::Generator& gen, double now_s) override {
    const auto t0 = std::chrono::steady_clock::now();
    finished_ = planner_.discover(field, gen, now_s, kCandidates);
    last_seconds_ = seconds_since(t0);
    discoveries_ += 1;
  }
  std::optional<StrategicPattern> take_finished() override { return std::exchange(finished_, {}); }
  std::vector<StrategicPattern> library() const override { return planner_.library(); }
  void restore_library(std::vector<StrategicPattern> l) override {
    planner_.set_library(std::move(l));
  }
  int64_t discoveries() const override { return discoveries_; }
  double last_discovery_seconds() const override { return last_seconds_; }

 private:
  StrategicPlanner planner_;
  std::optional<StrategicPattern> finished_;
  int64_t discoveries_ = 0;
  double last_seconds_ = 0.0;
};

// "async": one worker thread per brain runs the discoveries (the original's single-worker
// executor); a new request replaces one not yet started; the worker draws from the robot's
// generator between the cycle's draws (ATen locks the generator per call), so runs are not
// reproducible, as the original's are not.
class AsyncDiscovery final : public PatternDiscovery {
 public:
  explicit AsyncDiscovery(int64_t R) : planner_(R), worker_([this] { run(); }) {}
  ~AsyncDiscovery() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    stopping_ = true;  // a running discovery is abandoned at its next simulation step
    wake_.notify_all();
    worker_.join();
  }
  LegacyPlanner mode() const override { return LegacyPlanner::Async; }

  void request(const torch::Tensor& field, at::Generator& gen, double now_s) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_ = Job{field.clone(), gen, now_s};
    }
    wake_.notify_one();
  }
  std::optional<StrategicPattern> take_finished() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::exchange(finished_, {});
  }
  std::vector<StrategicPattern> library() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return library_;
  }
  void restore_library(std::vector<StrategicPattern> l) override {
    std::lock_guard<std::mutex> running(planner_mutex_);
    std::lock_guard<std::mutex> lock(mutex_);
    library_ = l;
    planner_.set_library(std::move(l));
  }
  int64_t discoveries() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return discoveries_;
  }
  double last_discovery_seconds() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_seconds_;
  }

 private:
  struct Job {
    torch::Tensor field;
    at::Generator gen;
    double now_s;
  };

  void run() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return stop_ || pending_.has_value(); });
        if (stop_) return;
        job = std::move(*pending_);
        pending_.reset();
      }
      std::lock_guard<std::mutex> running(planner_mutex_);
      const auto t0 = std::chrono::steady_clock::now();
      std::optional<StrategicPattern> best;
      try {
        best = planner_.discover(job.field, job.gen, job.now_s, kCandidates, 0.5, &stopping_);
      } catch (const std::exception&) {
        best.reset();  // the original prints the error and returns None
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
      finished_ = std::move(best);
      library_ = planner_.library();
      discoveries_ += 1;
      last_seconds_ = seconds_since(t0);
    }
  }

  StrategicPlanner planner_;        // the worker's while it runs a job (planner_mutex_)
  std::mutex planner_mutex_;
  mutable std::mutex mutex_;        // everything below
  std::condition_variable wake_;
  bool stop_ = false;
  std::atomic<bool> stopping_{false};
  std::optional<Job> pending_;
  std::optional<StrategicPattern> finished_;
  std::vector<StrategicPattern> library_;
  int64_t discoveries_ = 0;
  double last_seconds_ = 0.0;
  std::thread worker_;  // last: starts after every member above exists
};

}  // namespace

std::unique_ptr<PatternDiscovery> make_pattern_discovery(LegacyPlanner mode, int64_t resolution) {
  switch (mode) {
    case LegacyPlanner::Sync:
      return std::make_unique<SyncDiscovery>(resolution);
    case LegacyPlanner::Async:
      return std::make_unique<AsyncDiscovery>(resolution);
    case LegacyPlanner::Off:
      break;
  }
  return std::make_unique<OffDiscovery>();
}

}  // namespace fieldbrain::legacy
