#!/usr/bin/env python3
"""One side-by-side table of the two CUDA kernel sets (FIELDBRAIN_KERNELS=v1 and v2), for
scripts/gpu-check.sh --parts ab: each bench row's ms per cycle under v1 and v2, their ratio, and
the cost model's floor for the same row (scripts/gpu/cost_model.py), then the [cuda] tests'
results under each set.

  python3 scripts/gpu/ab_table.py --bench v1=bench-v1.json v2=bench-v2.json \
      --tests "v1 ops=0" "v2 ops=1" [--device-name "NVIDIA H200"]

Bench files are fieldbrain-bench --json output ({"rows": [...]}); several files per set are
merged. Standard library only.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cost_model  # noqa: E402


def load(paths):
    rows = {}
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as err:
            print(f"ab_table: cannot read {path}: {err}", file=sys.stderr)
            continue
        for r in data.get("rows", []):
            if r.get("ms_per_cycle", 0) > 0:
                rows[(r["impl"], r["R"], r["B"])] = r["ms_per_cycle"]
    return rows


def floor_ms(kernel_set, impl, R, B, gpu):
    model = cost_model.model(R, [B], kernel_set, 0.0, 0, 24, 4, 8)
    cycle = model["batches"][0]["cycle"]
    name = {"group": "cpp_fast"}.get(impl, impl)
    row = cycle["rows"].get(name)
    return row[gpu] if row else None


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--bench", nargs="+", default=[], metavar="SET=PATH")
    parser.add_argument("--tests", nargs="*", default=[], metavar="'SET SUITE=RC'")
    parser.add_argument("--device-name", default="", help="nvidia-smi's name: picks the floor's GPU")
    args = parser.parse_args(argv)
    files = {"v1": [], "v2": []}
    for item in args.bench:
        kernel_set, _, path = item.partition("=")
        files.setdefault(kernel_set, []).append(path)
    v1, v2 = load(files["v1"]), load(files["v2"])
    gpu = "H100" if "H100" in args.device_name else "H200"
    print(f"A/B of the CUDA kernel sets (ms per cycle; floor: scripts/gpu/cost_model.py, {gpu})")
    print("| row | R | B | v1 ms | v2 ms | v2 / v1 | floor v1 ms | floor v2 ms | v2 / floor |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted(set(v1) | set(v2), key=lambda k: (k[0], k[1], k[2])):
        impl, R, B = key
        a, b = v1.get(key), v2.get(key)
        f1, f2 = floor_ms("v1", impl, R, B, gpu), floor_ms("v2", impl, R, B, gpu)
        cell = lambda x: f"{x:.3f}" if x is not None else "-"
        print(f"| {impl} | {R} | {B} | {cell(a)} | {cell(b)} | "
              f"{f'{b / a:.2f}' if a and b else '-'} | {cell(f1)} | {cell(f2)} | "
              f"{f'{b / f2:.1f}x' if b and f2 else '-'} |")
    if args.tests:
        print()
        print("| [cuda] tests | v1 | v2 |")
        print("|---|---|---|")
        results = {}
        for item in args.tests:
            label, _, rc = item.rpartition("=")
            kernel_set, _, suite = label.partition(" ")
            results.setdefault(suite, {})[kernel_set] = "passed" if rc == "0" else f"FAILED (exit {rc})"
        for suite, by_set in results.items():
            print(f"| {suite} | {by_set.get('v1', '-')} | {by_set.get('v2', '-')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
