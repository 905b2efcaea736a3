#!/usr/bin/python3
"""Exports the field step as TorchScript to models/field_step.pt (docs/cycle.md, brain/INTERFACE.md).

The exported module's forward has the contract every scripted step honours:
    forward(self, field, noise, wave, ef, scalars) -> Tensor
and calls fieldbrain's fused operator, so the operator library is loaded first.

Usage: /usr/bin/python3 scripts/export_field_step.py [--ops build/lib/libfieldbrain_ops.so]
                                                     [--out models/field_step.pt]
"""
import argparse
import os

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class FieldStep(torch.nn.Module):
    """docs/cycle.md step 7.1-7.8 through the fused operator fieldbrain::field_step."""

    def forward(self, field: torch.Tensor, noise: torch.Tensor, wave: torch.Tensor,
                ef: torch.Tensor, scalars: torch.Tensor) -> torch.Tensor:
        return torch.ops.fieldbrain.field_step(field, noise, wave, ef, scalars)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default=os.path.join(ROOT, "build", "lib", "libfieldbrain_ops.so"))
    parser.add_argument("--out", default=os.path.join(ROOT, "models", "field_step.pt"))
    args = parser.parse_args()
    if not os.path.exists(args.ops):
        raise SystemExit(f"operator library not found: {args.ops} (build it with scripts/build.sh)")
    torch.ops.load_library(args.ops)
    scripted = torch.jit.script(FieldStep())
    tmp = args.out + ".tmp"
    scripted.save(tmp)
    os.replace(tmp, args.out)
    print(f"exported {args.out}")


if __name__ == "__main__":
    main()
