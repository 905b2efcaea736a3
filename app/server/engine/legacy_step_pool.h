// The threads that step one tick's legacy robots (app/server/engine/legacy_brain_engine.cpp):
// a fixed pool that runs task(0) ... task(n - 1) and returns when all have returned, one index
// per thread at a time, the calling thread taking part. Legacy robots share nothing (each has
// its own generators and state), so each one's numbers are those of its run alone, as long as
// every thread runs ATen as the calling thread does: the pool pins each helper's intra-op
// thread count to the engine's (ATen's reductions split their work by that count, so another
// count gives other float32 sums) and gives each task the caller's floating-point control word.
//
// Torch-free. A pool of 1 thread has no helpers: run() is a plain loop on the calling thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace fieldbrain::server {

class LegacyStepPool {
 public:
  // threads >= 1 (the caller and threads - 1 helpers). intra_op_threads: ATen's intra-op thread
  // count to pin on every helper. Returns once every helper has started and pinned it.
  LegacyStepPool(int threads, int intra_op_threads);
  ~LegacyStepPool();
  LegacyStepPool(const LegacyStepPool&) = delete;
  LegacyStepPool& operator=(const LegacyStepPool&) = delete;

  int threads() const { return static_cast<int>(helpers_.size()) + 1; }

  // Calls task(i) for every i in [0, n), each once, on this thread and the helpers; returns when
  // all have returned. `task` must not throw (a task catches and keeps its own failure). Called
  // from one thread at a time. Allocates nothing.
  template <class Task>
  void run(int64_t n, Task& task) {
    run_erased(n, [](void* t, int64_t i) { (*static_cast<Task*>(t))(i); }, &task);
  }

 private:
  using TaskFn = void (*)(void*, int64_t);
  void run_erased(int64_t n, TaskFn fn, void* task);
  void helper_main(int intra_op_threads);
  // Takes indices of the current job until none is left.
  void work(TaskFn fn, void* task, int64_t n, unsigned control_word);

  std::mutex mutex_;
  std::condition_variable wake_;  // a new job, or stop
  std::condition_variable done_;  // a helper finished the job (or started, in the constructor)
  // The current job, under mutex_ (next_ is claimed by each thread in turn, also under it: a
  // robot's cycle is milliseconds, so the lock is not contended).
  TaskFn fn_ = nullptr;
  void* task_ = nullptr;
  int64_t n_ = 0;
  int64_t next_ = 0;
  unsigned control_word_ = 0;
  uint64_t job_ = 0;       // incremented per run(): a helper works each job once
  int helpers_busy_ = 0;   // helpers that have not finished the current job
  int helpers_ready_ = 0;  // constructor: helpers that have pinned their thread count
  bool stop_ = false;
  std::vector<std::thread> helpers_;
};

// The threads "legacy_threads" asks for: itself when positive, else the CPU cores this process
// may run on (sched_getaffinity; std::thread::hardware_concurrency when that fails; at least 1).
int legacy_step_threads(int64_t configured);

}  // namespace fieldbrain::server
