#!/usr/bin/python3
"""Prints the README's "pick the resolution" table from fieldbrain-bench JSON files.

usage: scripts/resolution_table.py BENCH.json [BENCH.json ...] [--budget-ms 50]
Each file is one `fieldbrain-bench --impl cpp_fast --B 1 ... --json FILE` run (see
scripts/resolution_bench.sh, which makes them); its cpp_fast rows give one column per thread
count: the brain cycle's median and fastest ms per R. The last column says whether the median
leaves the robot's loop budget room for a machine 4x as busy (the margin the README asks for).
No figure is typed by hand: the README pastes this output.
"""
import json
import re
import sys

BUSY_FACTOR = 4.0  # a shared 2-core machine at load ~9 made cycles ~4x slower than quiet


def load_rows(paths):
    rows = []
    for path in paths:
        with open(path) as f:
            for r in json.load(f)["rows"]:
                if r.get("impl") == "cpp_fast" and r.get("B") == 1 and "skipped" not in r:
                    rows.append(r)
    return rows


def main(argv):
    budget = 50.0
    paths = []
    i = 0
    while i < len(argv):
        if argv[i] == "--budget-ms":
            budget = float(argv[i + 1])
            i += 2
        else:
            paths.append(argv[i])
            i += 1
    if not paths:
        print(__doc__)
        return 2
    rows = load_rows(paths)
    if not rows:
        print("no cpp_fast B=1 rows in " + ", ".join(paths))
        return 1
    threads = sorted({r["threads"] for r in rows})
    Rs = sorted({r["R"] for r in rows})
    by = {(r["R"], r["threads"]): r for r in rows}
    dims = sorted({m.group(0) for r in rows for m in [re.search(r"S=\d+ M=\d+", r.get("note", ""))] if m})
    head = ["R"] + [f"brain cycle, {t} thread{'s' if t > 1 else ''}: median / fastest" for t in threads]
    head.append(f"fits {budget:g} ms when 4x slower ({threads[0]} thread, fastest x {BUSY_FACTOR:g})")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for R in Rs:
        cells = [str(R)]
        for t in threads:
            r = by.get((R, t))
            cells.append(f"{r['ms_per_cycle']:.2f} / {r['ms_min']:.2f} ms" if r else "-")
        r1 = by.get((R, threads[0]))
        if r1:
            busy = BUSY_FACTOR * r1["ms_min"]
            cells.append(f"{'yes' if busy < 0.5 * budget else 'tight' if busy < budget else 'no'} "
                         f"(~{busy:.0f} ms)")
        else:
            cells.append("-")
        print("| " + " | ".join(cells) + " |")
    print(f"\n{', '.join(dims) or 'sizes not recorded'}, fused field step (`fieldbrain-bench` rows "
          f"cpp_fast, B = 1); 'yes' = {BUSY_FACTOR:g}x the fastest cycle is under half the budget.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
