#include "brain/ops/allocation_counter.h"

#include <c10/core/CPUAllocator.h>

#include <cstring>

namespace fieldbrain {
namespace ops {

c10::DataPtr AllocationCounter::Wrapper::allocate(size_t n) FIELDBRAIN_ALLOCATOR_CONST {
  count.fetch_add(1, std::memory_order_relaxed);
  return inner->allocate(n);
}

// The memory comes from `inner`, so it is freed the way `inner` frees it.
c10::DeleterFnPtr AllocationCounter::Wrapper::raw_deleter() const { return inner->raw_deleter(); }

// Host memory on both sides (Allocator::clone, LibTorch >= 2.3).
void AllocationCounter::Wrapper::copy_data(void* dest, const void* src, size_t n) const {
  if (n > 0) std::memcpy(dest, src, n);
}

// Priority 0 is the default CPU allocator's; an equal priority may replace it and restore it.
AllocationCounter::AllocationCounter() {
  wrapper_.inner = c10::GetCPUAllocator();
  c10::SetCPUAllocator(&wrapper_, 0);
}

AllocationCounter::~AllocationCounter() { c10::SetCPUAllocator(wrapper_.inner, 0); }

int64_t AllocationCounter::count() const { return wrapper_.count.load(); }

void AllocationCounter::reset() { wrapper_.count.store(0); }

}  // namespace ops
}  // namespace fieldbrain
