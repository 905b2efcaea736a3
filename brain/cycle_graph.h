// CycleGraph: the device part of a fast brain cycle captured once as a CUDA graph and replayed
// every later cycle (issue: one launch sequence per tick, no per-kernel launch cost).
//
// A cycle's device part is everything from uploading the fact tables to writing the motors
// into their device buffer: on the fused cycle it is the same launch sequence every cycle, with
// every per-robot decision read from the tables (brain/FUSED.md), so a graph recorded once
// replays any later cycle of the same batch exactly. The host part (filling the tables, ring
// counts, the motors' copy to the host) runs outside, every cycle.
//
// One graph per view of the rows: its first row and its batch size (a BrainGroup steps any
// contiguous range of its rows in place, so both vary, and a graph holds the raw device
// pointers of the rows it was captured on); reset() must be called whenever a buffer is
// reallocated (BrainGroup's growth). The first kWarmCycles cycles of a view run eagerly (lazy
// initialisations must not happen inside a capture). A capture that fails (an operator that
// syncs or is not capturable) is logged once and the brain stays eager: slower, never wrong.
//
// Only a CUDA build (FIELDBRAIN_WITH_CUDA) captures; elsewhere run() calls the part directly.
// FIELDBRAIN_CUDA_GRAPH=0 in the environment turns capture off (for comparisons and bisection).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <utility>

namespace fieldbrain {

class CycleGraph {
 public:
  static constexpr int kWarmCycles = 2;

  CycleGraph();
  ~CycleGraph();
  CycleGraph(const CycleGraph&) = delete;
  CycleGraph& operator=(const CycleGraph&) = delete;

  // Runs `device_part` for the robots in rows [first, first + batch) of the brain's storage on a
  // CUDA device: eagerly while warming up or when capture is off, else by replaying that view's
  // graph (capturing it first).
  void run(int64_t first, int64_t batch, const std::function<void()>& device_part);
  // Forgets every graph (buffers moved) and starts warming up again.
  void reset();
  // Whether this build and environment capture graphs at all.
  static bool enabled();
  // Replays so far (tests: a graph was really used).
  int64_t replays() const { return replays_; }

 private:
  struct Graphs;
  std::unique_ptr<Graphs> graphs_;
  using View = std::pair<int64_t, int64_t>;  // (first row, batch)
  std::map<View, int> warm_;                 // eager cycles run per view
  bool failed_ = false;          // a capture failed: stay eager
  int64_t replays_ = 0;
};

}  // namespace fieldbrain
