#!/usr/bin/python3
"""Draws fieldbrain-bench's JSON as a PNG: ms per cycle (log scale) per implementation, one
panel per resolution R, batch size B on the x axis.

usage: /usr/bin/python3 scripts/plot_bench.py bench.json [out.png]
Needs python3-matplotlib (scripts/setup.sh installs it).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ORDER = ["copy", "field_step_op", "field_step_reference", "cpp_fast", "cpp_reference", "python"]


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    src = sys.argv[1]
    dst = sys.argv[2] if len(sys.argv) > 2 else src.rsplit(".", 1)[0] + ".png"
    with open(src) as f:
        rows = [r for r in json.load(f)["rows"] if "skipped" not in r]  # skipped: not timed
    if not rows:
        print("no rows in " + src)
        return 1
    Rs = sorted({r["R"] for r in rows})
    impls = [i for i in ORDER if any(r["impl"] == i for r in rows)]
    impls += sorted({r["impl"] for r in rows} - set(impls))
    fig, axes = plt.subplots(1, len(Rs), figsize=(5 * len(Rs), 4), squeeze=False)
    for ax, R in zip(axes[0], Rs):
        for impl in impls:
            pts = sorted((r["B"], r["ms_per_cycle"]) for r in rows
                         if r["R"] == R and r["impl"] == impl)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=impl)
        ax.set_title(f"R = {R}")
        ax.set_xlabel("robots per batch (B)")
        ax.set_ylabel("ms per cycle (median)")
        ax.set_yscale("log")
        ax.set_xscale("log", base=2)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=8)
    fig.suptitle("fieldbrain-bench")
    fig.tight_layout()
    fig.savefig(dst, dpi=100)
    print("wrote " + dst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
