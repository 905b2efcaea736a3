// The layout of a cycle that the brain's modules (brain/) and the fused operators' kernels
// (brain/ops/, CPU and CUDA) must agree on: the columns of the per-robot fact tables, the
// capacity of every ring an operator writes, and the rules that decide a ring push. Plain C++17,
// no LibTorch, FIELDBRAIN_HOST_DEVICE, so a .cu kernel, a CPU kernel and a module all read these
// definitions rather than copies of them. The tables themselves are brain/cycle_facts.h.
#pragma once

#include <cstdint>

#include "brain/ops/philox.h"  // FIELDBRAIN_HOST_DEVICE

namespace fieldbrain {

// Columns of the int64 fact table [B, kFactColumns]. Ring counts are taken at the start of the
// cycle, before any of its pushes.
enum FactColumn : int64_t {
  kFactCycle = 0,           // n: cycles completed before this one
  kFactHasInput,            // 1 when max|a| > 0.01 (the imprint runs), else 0
  kFactHistCount,           // hierarchy.hist (1000 x [S])
  kFactRecentCount,         // prediction.recent (3 x [S])
  kFactHerrCount0,          // hierarchy.herr[k], k = 0..3 (kFactHerrCount0 + k)
  kFactPerrCount = kFactHerrCount0 + 4,  // modulation.perr
  kFactPimpCount,           // modulation.pimp
  kFactNovCount,            // modulation.nov
  kFactMapCount,            // imprint.map
  kFactCyclesWithoutInput,  // modulation.cwi before this cycle's update
  kFactAttractorSlot,       // the slot step 6 writes (attractor_count mod A), -1 when it stores none
  kFactColumns = 16,        // room for more without changing the table's shape
};

// Float facts [B, kValueColumns]: the cycle's inputs and the cycle number as the formulas use it.
enum ValueColumn : int64_t {
  kValueCycle = 0,  // float(n)
  kValueScored,     // 1 when n >= 1 (there is a prediction to score), else 0
  kValueReward,     // r
  kValuePhase,      // float32(0.1 * double(n)): the wave phase of step 7.2
  kValueColumns = 4,
};

// Ring capacities (docs/cycle.md "Ring buffers").
constexpr int64_t kHistCapacity = 1000;  // hierarchy.hist: the sensory history
constexpr int64_t kHerrCapacity = 50;    // hierarchy.herr[k]: each timescale's errors
constexpr int64_t kRecentCapacity = 3;   // prediction.recent: the last inputs
constexpr int64_t kNovCapacity = 200;    // modulation.nov: novelty samples
constexpr int64_t kErrCapacity = 50;     // modulation.perr and modulation.pimp
constexpr int64_t kMapCapacity = 100;    // imprint.map: imprinted patterns

// Push rules: whether a ring gets this cycle's push, from counts every path knows.
// pimp gets the improvement once perr, counted after this cycle's push, holds more than 20.
FIELDBRAIN_HOST_DEVICE constexpr bool pimp_pushes(int64_t perr_count_after) {
  return perr_count_after > 20;
}
// Cycles without input counted after this cycle: input resets the count, a cycle without input
// adds one; after more than 100 the brain dreams (step 5: drive 0.95).
FIELDBRAIN_HOST_DEVICE constexpr int64_t cycles_without_input_after(int64_t before, bool has_input) {
  return has_input ? 0 : before + 1;
}
FIELDBRAIN_HOST_DEVICE constexpr bool dreaming(int64_t cycles_without_input) {
  return cycles_without_input > 100;
}
// Step 2 runs for scored robots (n >= 1); timescale k is active, learns and pushes its error to
// herr[k] when k = 0, or k = 1 and h >= 10, or k >= 2 and h >= 100, with h the history count
// after this cycle's push.
FIELDBRAIN_HOST_DEVICE constexpr bool timescale_active(int64_t n, int64_t hist_count_after, int k) {
  return n >= 1 && (k == 0 || (k == 1 && hist_count_after >= 10) ||
                    (k >= 2 && hist_count_after >= 100));
}

}  // namespace fieldbrain
