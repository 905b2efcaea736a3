#include "brain/ops/caching_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

#include <cstring>

namespace fieldbrain {
namespace ops {
namespace {

// Every block starts with a header holding its size, so that the raw deleter (which only gets
// the data pointer) can put it back in the right list without a lookup table. The header is as
// large as c10's alignment, so the data stays 64-byte aligned.
constexpr size_t kHeader = 64;
constexpr size_t kGranule = 512;  // sizes are rounded up to this, so near sizes share blocks

size_t block_size(size_t n) { return kHeader + (n + kGranule - 1) / kGranule * kGranule; }

CachingCpuAllocator* g_installed = nullptr;
std::once_flag g_install_once;

}  // namespace

CachingCpuAllocator& CachingCpuAllocator::install() {
  static CachingCpuAllocator* instance = new CachingCpuAllocator();  // lives as long as any tensor
  std::call_once(g_install_once, [] {
    g_installed = instance;  // before any block can be handed out (and freed)
    // Priority 0 is the default allocator's; an equal priority replaces it.
    c10::SetCPUAllocator(instance, 0);
  });
  return *instance;
}

CachingCpuAllocator* CachingCpuAllocator::installed() { return g_installed; }

c10::DataPtr CachingCpuAllocator::allocate(size_t n) FIELDBRAIN_ALLOCATOR_CONST {
  if (n == 0) return {nullptr, nullptr, &release, c10::Device(c10::DeviceType::CPU)};
  const size_t bytes = block_size(n);
  char* block = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.requests;
    stats_.in_use_bytes += static_cast<int64_t>(bytes);
    auto it = free_blocks_.find(bytes);
    if (it != free_blocks_.end() && !it->second.empty()) {
      block = static_cast<char*>(it->second.back());
      it->second.pop_back();
      stats_.cached_bytes -= static_cast<int64_t>(bytes);
    } else {
      ++stats_.system_allocations;
    }
  }
  if (block == nullptr) {
    block = static_cast<char*>(c10::alloc_cpu(bytes));  // throws on out-of-memory
    *reinterpret_cast<size_t*>(block) = bytes;
  }
  void* data = block + kHeader;
  return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
}

c10::DeleterFnPtr CachingCpuAllocator::raw_deleter() const { return &release; }

// Host memory on both sides (Allocator::clone, LibTorch >= 2.3).
void CachingCpuAllocator::copy_data(void* dest, const void* src, size_t n) const {
  if (n > 0) std::memcpy(dest, src, n);
}

void CachingCpuAllocator::release(void* data) {
  if (data == nullptr) return;
  char* block = static_cast<char*>(data) - kHeader;
  g_installed->give_back(block, *reinterpret_cast<size_t*>(block));
}

void CachingCpuAllocator::give_back(void* block, size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.in_use_bytes -= static_cast<int64_t>(bytes);
    if (stats_.cached_bytes + static_cast<int64_t>(bytes) <= max_cached_bytes) {
      free_blocks_[bytes].push_back(block);
      stats_.cached_bytes += static_cast<int64_t>(bytes);
      return;
    }
  }
  c10::free_cpu(block);
}

CachingCpuAllocator::Stats CachingCpuAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingCpuAllocator::release_cached() {
  std::unordered_map<size_t, std::vector<void*>> blocks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks.swap(free_blocks_);
    stats_.cached_bytes = 0;
  }
  for (auto& entry : blocks) {
    for (void* block : entry.second) c10::free_cpu(block);
  }
}

}  // namespace ops
}  // namespace fieldbrain
