// The legacy profile's robots on every core (docs/legacy.md "Threads"): rows of B legacy robots
// of one (S, M) = (24, 4) stepped by the server's own legacy engine, one tick (every robot one
// cycle) per iteration, on a smooth stream with the fixed clock and the planner off:
//   "legacy_tick"     "legacy_threads": 1, the robots one after the other on one thread;
//   "legacy_threads"  "legacy_threads": B, one robot per thread.
// ms is the tick's median; robot-cycles/s = 1000 B / ms. Each thread runs ATen with one
// intra-op thread (P5), as the engine does.
//
// On a shared machine other processes take cores away from one row and not the other: when both
// rows are asked for, their engines are timed alternately, in blocks of ~0.2 s, so both see the
// same load, and each row's note says how much of its threads' time they waited for a CPU
// (/proc/self/task/*/schedstat; about 0 on an idle machine).
#pragma once

#include <cstdint>
#include <vector>

#include "app/bench/bench_report.h"
#include "app/bench/bench_rows.h"

namespace fieldbrain {
namespace bench {

// The rows asked for (tick: "legacy_tick", threads: "legacy_threads"), in that order; each row
// gets the budget's seconds (both: alternately, 2 x seconds in all).
std::vector<BenchRow> time_legacy_ticks(int64_t R, int64_t B, bool tick, bool threads,
                                        const RowBudget& budget);
// Per R and B: legacy_threads' robot-cycles/s beside legacy_tick's, and their ratio (issue 38's
// target: >= 1.8x at B = 2 on a 2-core machine).
void print_legacy_thread_gains(const std::vector<BenchRow>& rows);

}  // namespace bench
}  // namespace fieldbrain
