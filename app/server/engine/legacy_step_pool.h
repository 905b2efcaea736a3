// The threads that step one tick's legacy robots (app/server/engine/legacy_brain_engine.cpp):
// a fixed pool that runs task(0) ... task(n - 1) and returns when all have returned, one index
// per thread at a time, the calling thread taking part. Legacy robots share nothing (each has
// its own generators and state), so each one's numbers are those of its run alone, as long as
// every thread runs ATen as the calling thread does: the pool pins each helper's intra-op
// thread count to the engine's (ATen's reductions split their work by that count, so another
// count gives other float32 sums) and gives each task the caller's floating-point control word.
//
// Hand-offs (docs/legacy.md "Threads"): thread t (the caller is 0) owns the t-th of T equal
// ranges of indices and takes its own first, so a robot is stepped by the same thread tick
// after tick while the group stays the same (its state stays in that core's cache: a version
// where any thread took any robot spent ~40% more CPU per cycle at R = 16); a thread done with
// its range takes what is left of the others'. Each range's next index is claimed from an
// atomic word that also names the job, so a helper that wakes late takes nothing stale, and the
// caller never waits for a helper that took nothing. A thread with nothing to do spins briefly
// (kSpin) before it sleeps on a condition variable, so back-to-back ticks pass without a futex
// wake.
//
// Torch-free. A pool of 1 thread has no helpers: run() is a plain loop on the calling thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace fieldbrain::server {

class LegacyStepPool {
 public:
  // How long a thread with nothing to do polls before it sleeps: a few wake-ups' worth
  // (a futex wake costs ~5-15 us here), short beside a robot's cycle (~4 ms at R = 16).
  static constexpr std::chrono::microseconds kSpin{50};

  // threads >= 1 (the caller and threads - 1 helpers). intra_op_threads: ATen's intra-op thread
  // count to pin on every helper. Returns once every helper has started and pinned it.
  LegacyStepPool(int threads, int intra_op_threads);
  ~LegacyStepPool();
  LegacyStepPool(const LegacyStepPool&) = delete;
  LegacyStepPool& operator=(const LegacyStepPool&) = delete;

  int threads() const { return static_cast<int>(helpers_.size()) + 1; }

  // Calls task(i) for every i in [0, n), each once, on this thread and the helpers; returns when
  // all have returned. `task` must not throw (a task catches and keeps its own failure). Called
  // from one thread at a time; n < 2^32. Allocates nothing.
  template <class Task>
  void run(int64_t n, Task& task) {
    run_erased(n, [](void* t, int64_t i) { (*static_cast<Task*>(t))(i); }, &task);
  }

 private:
  using TaskFn = void (*)(void*, int64_t);
  void run_erased(int64_t n, TaskFn fn, void* task);
  void helper_main(int self, int intra_op_threads);
  // Waits (spinning, then sleeping) until a job other than `seen` is published or the pool
  // stops; returns that job's number (meaningless once stop_ is set).
  uint32_t wait_for_job(uint32_t seen);
  // Thread `self` claims and runs indices of job `job`, its own range first, then the others',
  // until none is left (or the job is no longer current).
  void work(uint32_t job, int self);
  void wait_until_done(int64_t n);
  int64_t range_begin(int range, int64_t n) const { return n * range / threads(); }

  // The current job. fn_ ... control_word_, done_ and the ranges' words are written by run()
  // before it publishes the job in job_ (release); a thread reads them after it has seen the
  // job there (acquire) and uses them only if it then claims an index of that job (which keeps
  // the job alive: a later job is published only once this one's tasks have all returned).
  std::atomic<TaskFn> fn_{nullptr};
  std::atomic<void*> task_{nullptr};
  std::atomic<int64_t> n_{0};
  std::atomic<unsigned> control_word_{0};
  std::atomic<uint32_t> job_{0};  // the current job's number; 0 is never published
  // Per thread's range, on its own cache line: (job number << 32) | the range's next unclaimed
  // index. One compare-exchange claims an index of the job a thread read, never a later job's.
  struct alignas(64) RangeClaim {
    std::atomic<uint64_t> word{0};
  };
  std::vector<RangeClaim> ranges_;
  std::atomic<int64_t> done_{0};  // indices of the current job whose task has returned
  std::atomic<bool> stop_{false};
  uint32_t jobs_ = 0;  // jobs published (run()'s thread only)

  std::mutex mutex_;              // only for sleeping: the condition variables' lock
  std::condition_variable wake_;  // a new job, or stop
  std::condition_variable done_cv_;  // the current job's last task returned (or, in the
                                     // constructor, a helper pinned its thread count)
  int helpers_ready_ = 0;            // under mutex_
  std::vector<std::thread> helpers_;
};

// The threads "legacy_threads" asks for: itself when positive, else the CPU cores this process
// may run on (sched_getaffinity; std::thread::hardware_concurrency when that fails; at least 1).
int legacy_step_threads(int64_t configured);

}  // namespace fieldbrain::server
