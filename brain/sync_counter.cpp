#include "brain/sync_counter.h"

namespace fieldbrain {
namespace {
thread_local int64_t g_syncs = 0;
}

torch::Tensor SyncCounter::to_host(const torch::Tensor& t) {
  ++g_syncs;
  // clone on the CPU device too: the caller gets its own tensor, not a view of a buffer.
  if (t.device().is_cpu()) return t.clone();
  return t.to(torch::kCPU);
}

void SyncCounter::copy_to_host(const torch::Tensor& t, torch::Tensor& host) {
  ++g_syncs;
  host.copy_(t);
}

int64_t SyncCounter::count() { return g_syncs; }
void SyncCounter::reset() { g_syncs = 0; }

}  // namespace fieldbrain
