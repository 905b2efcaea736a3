#!/usr/bin/python3
"""What a Python call adds to a brain cycle: fieldbrain.Brain.step against the same brain's
cycle looped in C++ (Brain._time_native), in one run, interleaved, one intra-op thread.

    PYTHONPATH=build/python /usr/bin/python3 python/bench/step_overhead.py [--R 8] [--rounds 15]

Prints a Markdown table (the README's "Python" row comes from it) and, with --json FILE, the
numbers. Two measures of the overhead: "difference" = median over rounds of (Python us/call -
C++ us/cycle), each round timing --cycles cycles both ways on the one brain (noisy: it is the
difference of two cycle times, each ~2 ms at R = 8); "Python call without the cycle" = what
Brain._step_without_cycle costs from Python, i.e. exactly the work step() adds around the cycle
(argument unpacking and checks, GIL release, lock, a fresh motors tensor returned), timed over
20000 calls (precise to a fraction of a microsecond).
Times are the CPU time of the stepping thread (time.thread_time / CLOCK_THREAD_CPUTIME_ID): on a
shared machine wall time mostly measures the neighbours, and with one intra-op thread the whole
cycle runs on the calling thread.
"""

import argparse
import json
import statistics
import time

import numpy as np
import torch

torch.set_num_threads(1)

import fieldbrain  # noqa: E402


def time_calls(call, x, n):
    """CPU seconds of n calls of call(x) on this thread."""
    t0 = time.thread_time()
    for _ in range(n):
        call(x)
    return time.thread_time() - t0


def measure(profile, field_step, R, S, M, cycles, rounds, numpy_input):
    kw = {} if profile == "legacy" else {"field_step": field_step}
    brain = fieldbrain.Brain(profile=profile, resolution=R, sensors=S, motors=M, seed=1, **kw)
    x = torch.linspace(-0.5, 0.5, S)
    xin = x.numpy() if numpy_input else x
    for _ in range(20):  # warm-up: allocator pools, first-cycle work
        brain.step(xin)
    cpp, py = [], []
    for _ in range(rounds):
        cpp.append(brain._time_native(x, cycles) / cycles * 1e6)
        py.append(time_calls(brain.step, xin, cycles) / cycles * 1e6)
    over = [p - c for p, c in zip(py, cpp)]
    binding = [time_calls(brain._step_without_cycle, xin, 20000) / 20000 * 1e6
               for _ in range(rounds)]
    return {"profile": profile, "field_step": field_step if profile != "legacy" else "-",
            "input": "numpy" if numpy_input else "torch", "R": R,
            "cpp_us": statistics.median(cpp), "python_us": statistics.median(py),
            "overhead_us": statistics.median(over), "binding_us": statistics.median(binding)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--R", type=int, default=8)
    ap.add_argument("--S", type=int, default=24)
    ap.add_argument("--M", type=int, default=4)
    ap.add_argument("--cycles", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--legacy", action="store_true", help="also the legacy profile (slower)")
    ap.add_argument("--json", help="write the rows here")
    a = ap.parse_args()
    configs = [("fieldbrain", "fast", False), ("fieldbrain", "fast", True),
               ("fieldbrain", "reference", False)]
    if a.legacy:
        configs.append(("legacy", None, False))
    rows = []
    for profile, fs, use_numpy in configs:
        cycles = a.cycles if profile != "legacy" else max(10, a.cycles // 20)
        rows.append(measure(profile, fs, a.R, a.S, a.M, cycles, a.rounds, use_numpy))
    print(f"torch {torch.__version__}, 1 thread, S={a.S} M={a.M}, CPU")
    print("| profile | field_step | input | R | C++ cycle (us) | Python step (us) | "
          "difference (us) | Python call without the cycle (us) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['profile']} | {r['field_step']} | {r['input']} | {r['R']} | {r['cpp_us']:.1f} "
              f"| {r['python_us']:.1f} | {r['overhead_us']:.1f} | {r['binding_us']:.2f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
