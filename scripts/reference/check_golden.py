#!/usr/bin/env python3
"""Check the Python reference's field_step against the original prototype's golden outputs.

Usage: check_golden.py DIR [--tolerance 2e-6] [--ops libfieldbrain_ops.so]
Feeds every step of every legacy_field_step_*.pt in DIR (test/fixtures/golden/) to
fieldbrain_ref.field_step (and, with --ops, to the fused operator torch.ops.fieldbrain.field_step
loaded from that library; FIELDBRAIN_ISA=default|avx2 in the environment picks a narrower CPU
variant) and prints max |ours - legacy_out| per file; exits 1 when any step is over the
tolerance.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fieldbrain_ref  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--tolerance", type=float, default=2e-6)
    ap.add_argument("--ops", default=None, help="also check the fused operator from this library")
    args = ap.parse_args(argv)
    impls = [("python-reference", fieldbrain_ref.field_step)]
    if args.ops:
        torch.ops.load_library(args.ops)
        isa = os.environ.get("FIELDBRAIN_ISA") or "widest"
        impls.append(("operator-" + isa, torch.ops.fieldbrain.field_step))
    names = sorted(n for n in os.listdir(args.dir)
                   if n.startswith("legacy_field_step_") and n.endswith(".pt"))
    if not names:
        print(f"no legacy_field_step_*.pt in {args.dir}")
        return 1
    checked, worst_all = 0, 0.0
    for impl, step in impls:
        for name in names:
            d = torch.load(os.path.join(args.dir, name), weights_only=True)
            worst = 0.0
            for i in range(d["steps"]):
                p = f"step{i}."
                out = step(d[p + "field"], d[p + "noise"], d[p + "wave"], d[p + "ef"],
                           d[p + "scalars"])
                worst = max(worst, (out - d[p + "legacy_out"]).abs().max().item())
                checked += 1
            worst_all = max(worst_all, worst)
            print(f"golden {impl} {name} (scenario {d['scenario']}): "
                  f"worst max|diff| {worst:.3g} over {d['steps']} steps")
    print(f"{checked} steps checked, worst {worst_all:.3g}, tolerance {args.tolerance:g}")
    return 0 if worst_all <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
