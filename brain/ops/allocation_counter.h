// Counts CPU tensor allocations: while an AllocationCounter is alive, every allocation made
// through c10's CPU allocator (at::empty, clone, contiguous copies, ...) on any thread is
// counted; the previous allocator is restored on destruction. Used by the zero-allocation
// test of the fused field step and by fieldbrain-bench's allocs_per_cycle column.
// Not reentrant: one counter at a time.
#pragma once

#include <atomic>
#include <cstdint>

#include <c10/core/Allocator.h>

#include "brain/ops/torch_compat.h"

namespace fieldbrain {
namespace ops {

class AllocationCounter {
 public:
  AllocationCounter();
  ~AllocationCounter();
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;

  int64_t count() const;  // allocations since construction or the last reset()
  void reset();

 private:
  struct Wrapper : c10::Allocator {
    c10::Allocator* inner = nullptr;
    mutable std::atomic<int64_t> count{0};
    c10::DataPtr allocate(size_t n) FIELDBRAIN_ALLOCATOR_CONST override;
    c10::DeleterFnPtr raw_deleter() const override;
    void copy_data(void* dest, const void* src, size_t n) const FIELDBRAIN_COPY_DATA_OVERRIDE;
  };
  Wrapper wrapper_;
};

}  // namespace ops
}  // namespace fieldbrain
