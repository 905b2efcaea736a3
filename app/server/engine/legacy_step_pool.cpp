#include "app/server/engine/legacy_step_pool.h"

#include <ATen/Parallel.h>
#include <sched.h>

#include <algorithm>
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

}  // namespace

int legacy_step_threads(int64_t configured) {
  if (configured > 0) return static_cast<int>(configured);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

LegacyStepPool::LegacyStepPool(int threads, int intra_op_threads) {
  if (threads < 1) {
    throw std::invalid_argument("legacy step pool: " + std::to_string(threads) + " threads");
  }
  helpers_.reserve(static_cast<size_t>(threads - 1));
  try {
    for (int i = 1; i < threads; ++i) {
      helpers_.emplace_back([this, intra_op_threads] { helper_main(intra_op_threads); });
    }
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : helpers_) t.join();
    throw;
  }
  // Every helper pins its intra-op thread count before the pool steps anything (setting it
  // rebuilds ATen's own pools, which must not happen under a running cycle).
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return helpers_ready_ == static_cast<int>(helpers_.size()); });
}

LegacyStepPool::~LegacyStepPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

void LegacyStepPool::helper_main(int intra_op_threads) {
  // A thread ATen has not seen takes the process's count lazily, or OMP_NUM_THREADS' with an
  // OpenMP build (omp_set_num_threads is per thread): pin the engine's count explicitly.
  if (at::get_num_threads() != intra_op_threads) at::set_num_threads(intra_op_threads);
  uint64_t seen = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++helpers_ready_;
  }
  done_.notify_all();
  for (;;) {
    TaskFn fn = nullptr;
    void* task = nullptr;
    int64_t n = 0;
    unsigned control_word = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || job_ != seen; });
      if (stop_) return;
      seen = job_;
      fn = fn_;
      task = task_;
      n = n_;
      control_word = control_word_;
    }
    work(fn, task, n, control_word);
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last = --helpers_busy_ == 0;
    }
    if (last) done_.notify_all();
  }
}

void LegacyStepPool::work(TaskFn fn, void* task, int64_t n, unsigned control_word) {
  use_control_word(control_word);
  for (;;) {
    int64_t i = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (next_ >= n) return;
      i = next_++;
    }
    fn(task, i);
  }
}

void LegacyStepPool::run_erased(int64_t n, TaskFn fn, void* task) {
  if (n <= 0) return;
  if (helpers_.empty() || n == 1) {
    for (int64_t i = 0; i < n; ++i) fn(task, i);
    return;
  }
  const unsigned control_word = read_control_word();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = fn;
    task_ = task;
    n_ = n;
    next_ = 0;
    control_word_ = control_word;
    ++job_;
    helpers_busy_ = static_cast<int>(helpers_.size());
  }
  wake_.notify_all();
  work(fn, task, n, control_word);
  // The job lives on the caller's stack: return only when no helper can still touch it.
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return helpers_busy_ == 0; });
}

}  // namespace fieldbrain::server
