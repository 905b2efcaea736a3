#include "brain/cycle_graph.h"

#include <cstdlib>
#include <cstring>

#include <spdlog/spdlog.h>

#ifdef FIELDBRAIN_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace fieldbrain {

#ifdef FIELDBRAIN_WITH_CUDA
struct CycleGraph::Graphs {
  std::map<std::pair<int64_t, int64_t>, std::unique_ptr<at::cuda::CUDAGraph>> by_view;
};
#else
struct CycleGraph::Graphs {};
#endif

CycleGraph::CycleGraph() : graphs_(std::make_unique<Graphs>()) {}
CycleGraph::~CycleGraph() = default;

bool CycleGraph::enabled() {
#ifdef FIELDBRAIN_WITH_CUDA
  const char* env = std::getenv("FIELDBRAIN_CUDA_GRAPH");
  return env == nullptr || std::strcmp(env, "0") != 0;
#else
  return false;
#endif
}

void CycleGraph::reset() {
  *graphs_ = Graphs{};
  warm_.clear();
}

void CycleGraph::run(int64_t first, int64_t batch, const std::function<void()>& device_part) {
  const View view{first, batch};
  if (failed_ || !enabled() || warm_[view] < kWarmCycles) {
    ++warm_[view];
    device_part();
    return;
  }
#ifdef FIELDBRAIN_WITH_CUDA
  auto& graph = graphs_->by_view[view];
  if (!graph) {
    auto fresh = std::make_unique<at::cuda::CUDAGraph>();
    // Capture needs a stream other than the default one; it records, it does not run.
    const auto side = c10::cuda::getStreamFromPool();
    try {
      const c10::cuda::CUDAStreamGuard on_side(side);
      fresh->capture_begin();
      device_part();
      fresh->capture_end();
    } catch (const std::exception& e) {
      try {
        fresh->capture_end();  // ends the broken capture so the stream is usable again
      } catch (const std::exception&) {
        // expected: the capture was invalidated
      }
      failed_ = true;
      spdlog::warn("brain: CUDA graph capture failed, the brain stays eager: {}", e.what());
      // The capture did not run the part: run it now, on the stream the caller uses.
      device_part();
      return;
    }
    graph = std::move(fresh);
  }
  graph->replay();  // on the current stream, ordered before the caller's copy of the motors
  ++replays_;
#else
  device_part();
#endif
}

}  // namespace fieldbrain
