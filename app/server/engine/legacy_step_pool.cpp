#include "app/server/engine/legacy_step_pool.h"

#include <ATen/Parallel.h>
#include <sched.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define FIELDBRAIN_HAS_MXCSR 1
#endif

namespace fieldbrain::server {
namespace {

// The SSE control word (rounding mode, flush-to-zero, denormals-are-zero): per thread, and it
// decides float32 results, so a helper computes with the caller's.
unsigned read_control_word() {
#ifdef FIELDBRAIN_HAS_MXCSR
  return _mm_getcsr();
#else
  return 0;
#endif
}
void use_control_word(unsigned word) {
#ifdef FIELDBRAIN_HAS_MXCSR
  if (_mm_getcsr() != word) _mm_setcsr(word);
#else
  (void)word;
#endif
}

// One poll of a spin: tells the core (and a hyperthread sibling) that this thread only waits.
void relax() {
#ifdef FIELDBRAIN_HAS_MXCSR
  _mm_pause();
#endif
}

// Polls done() for up to LegacyStepPool::kSpin; true as soon as it holds.
template <class Done>
bool spin_until(Done done) {
  using Clock = std::chrono::steady_clock;
  const auto until = Clock::now() + LegacyStepPool::kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      relax();
    }
    if (Clock::now() >= until) return done();
  }
}

constexpr uint32_t job_of(uint64_t claim) { return static_cast<uint32_t>(claim >> 32); }
constexpr int64_t index_of(uint64_t claim) { return static_cast<int64_t>(claim & 0xffffffffu); }

}  // namespace

int legacy_step_threads(int64_t configured) {
  if (configured > 0) return static_cast<int>(configured);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

LegacyStepPool::LegacyStepPool(int threads, int intra_op_threads)
    : ranges_(static_cast<size_t>(std::max(threads, 1))) {
  if (threads < 1) {
    throw std::invalid_argument("legacy step pool: " + std::to_string(threads) + " threads");
  }
  helpers_.reserve(static_cast<size_t>(threads - 1));
  try {
    for (int i = 1; i < threads; ++i) {
      helpers_.emplace_back([this, i, intra_op_threads] { helper_main(i, intra_op_threads); });
    }
  } catch (...) {
    stop_.store(true);
    { std::lock_guard<std::mutex> lock(mutex_); }
    wake_.notify_all();
    for (std::thread& t : helpers_) t.join();
    throw;
  }
  // Every helper pins its intra-op thread count before the pool steps anything (setting it
  // rebuilds ATen's own pools, which must not happen under a running cycle).
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] { return helpers_ready_ == static_cast<int>(helpers_.size()); });
}

LegacyStepPool::~LegacyStepPool() {
  stop_.store(true);
  { std::lock_guard<std::mutex> lock(mutex_); }  // a helper between its check and its sleep
  wake_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

void LegacyStepPool::helper_main(int self, int intra_op_threads) {
  // A thread ATen has not seen takes the process's count lazily, or OMP_NUM_THREADS' with an
  // OpenMP build (omp_set_num_threads is per thread): pin the engine's count explicitly.
  if (at::get_num_threads() != intra_op_threads) at::set_num_threads(intra_op_threads);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++helpers_ready_;
  }
  done_cv_.notify_all();
  uint32_t seen = 0;
  for (;;) {
    seen = wait_for_job(seen);
    if (stop_.load()) return;
    work(seen, self);
  }
}

uint32_t LegacyStepPool::wait_for_job(uint32_t seen) {
  const auto published = [&] {
    return stop_.load(std::memory_order_relaxed) || job_.load(std::memory_order_acquire) != seen;
  };
  if (!spin_until(published)) {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, published);
  }
  return job_.load(std::memory_order_acquire);
}

void LegacyStepPool::work(uint32_t job, int self) {
  // Read after seeing `job` in job_: this job's values, or (from any one of them on) a later
  // job's, in which case every compare-exchange below fails: run() closes the ranges before it
  // writes a later job's values (release), so a thread that has read one of those (acquire)
  // finds no range of `job` open. A later job starts only once this one's tasks have returned.
  const TaskFn fn = fn_.load(std::memory_order_acquire);
  void* const task = task_.load(std::memory_order_acquire);
  const int64_t n = n_.load(std::memory_order_acquire);
  const unsigned control_word = control_word_.load(std::memory_order_acquire);
  const bool helper = self != 0;
  bool control_word_set = !helper;
  const int T = threads();
  for (int k = 0; k < T; ++k) {
    const int range = (self + k) % T;  // its own range first, then the next ones'
    const int64_t end = range_begin(range + 1, n);
    std::atomic<uint64_t>& word = ranges_[static_cast<size_t>(range)].word;
    uint64_t claim = word.load(std::memory_order_acquire);
    while (job_of(claim) == job && index_of(claim) < end) {
      if (!word.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        continue;  // `claim` now holds the current word
      }
      if (!control_word_set) {
        use_control_word(control_word);
        control_word_set = true;
      }
      fn(task, index_of(claim));
      if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == n && helper) {
        // The caller may be asleep on the last task.
        { std::lock_guard<std::mutex> lock(mutex_); }
        done_cv_.notify_all();
      }
      claim = word.load(std::memory_order_acquire);
    }
  }
}

void LegacyStepPool::wait_until_done(int64_t n) {
  const auto all_done = [&] { return done_.load(std::memory_order_acquire) == n; };
  if (spin_until(all_done)) return;
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, all_done);
}

void LegacyStepPool::run_erased(int64_t n, TaskFn fn, void* task) {
  if (n <= 0) return;
  if (helpers_.empty() || n == 1) {
    for (int64_t i = 0; i < n; ++i) fn(task, i);
    return;
  }
  if (n > std::numeric_limits<uint32_t>::max()) {
    throw std::invalid_argument("legacy step pool: " + std::to_string(n) + " tasks in one run");
  }
  // Job 0 is the helpers' "nothing seen yet": skip it when the count wraps.
  if (++jobs_ == 0) ++jobs_;
  // Close the last job's ranges (job 0 is never a job) before writing this job's values: a
  // helper still holding the last job's number must not claim an index past its end with this
  // job's n (work()).
  for (RangeClaim& range : ranges_) range.word.store(0, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  fn_.store(fn, std::memory_order_release);
  task_.store(task, std::memory_order_release);
  n_.store(n, std::memory_order_release);
  control_word_.store(read_control_word(), std::memory_order_release);
  for (int r = 0; r < threads(); ++r) {
    ranges_[static_cast<size_t>(r)].word.store(
        static_cast<uint64_t>(jobs_) << 32 | static_cast<uint64_t>(range_begin(r, n)),
        std::memory_order_relaxed);
  }
  job_.store(jobs_, std::memory_order_release);
  { std::lock_guard<std::mutex> lock(mutex_); }  // a helper between its check and its sleep
  wake_.notify_all();
  work(jobs_, 0);
  // The job lives on the caller's stack: return only when every claimed task has returned
  // (a helper that claimed nothing never touches it).
  wait_until_done(n);
}

}  // namespace fieldbrain::server
