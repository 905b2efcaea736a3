#!/usr/bin/python3
"""Python torch's draw sequence of the original field brain, for test/legacy/torch_draws_test.cpp.

Replays, with plain torch (no em-brain needed), the generator calls the original makes
(test/fixtures/legacy/README.md, "Notes for the port" 3) after torch.manual_seed(seed), at a small R so every value can be
stored: construction (randn [R,R,R,64]; randn [n_waves,3]; 4 x randn_like [R,R,R,4]; 4 x
xavier_uniform_ [16,S] with gains 1, .5, .3, .2), then per cycle (randn_like [R,R,R] when the
imprint takes the empty location; randn [R,R,R,48]; (M-4) x randn [1]; randn [M]).

Writes into --out (default test/fixtures/legacy/torch_draws/): cases.json (one entry per case:
seed, R, S, M, n_waves, empty: one flag per cycle, file) and one float32 .npy per case holding
every drawn value, raw (before the original's scaling), in draw order.
Run: /usr/bin/python3 scripts/legacy/make_draws_fixture.py
"""
import argparse
import json
import os

import torch

# n_waves 3 and 5 leave a spare normal in the generator (9, 15 values, odd, < 16), 4 does not;
# at R = 2 the cycle's randn_like [R,R,R] (8 values) takes the same per-element path
CASES = [
    dict(seed=42, R=4, S=24, M=4, n_waves=5, empty=[True, True, False]),
    dict(seed=42, R=3, S=12, M=6, n_waves=4, empty=[False, False, False]),
    dict(seed=0, R=2, S=24, M=4, n_waves=3, empty=[True, False, True]),
    dict(seed=7, R=3, S=12, M=6, n_waves=5, empty=[False, True, False]),
    dict(seed=123456789, R=2, S=16, M=5, n_waves=3, empty=[False, False]),
]


def draw_case(c):
    torch.manual_seed(c["seed"])
    R, S, M = c["R"], c["S"], c["M"]
    out = [torch.randn([R, R, R, 64]), torch.randn([c["n_waves"], 3])]
    dyn = torch.zeros([R, R, R, 16])
    for k in range(4):
        out.append(torch.randn_like(dyn[:, :, :, 4 * k:4 * k + 4]))
    for gain in (1.0, 0.5, 0.3, 0.2):
        w = torch.zeros([16, S])
        torch.nn.init.xavier_uniform_(w, gain=gain)
        out.append(w)
    for empty in c["empty"]:
        if empty:
            out.append(torch.randn_like(torch.zeros([R, R, R])))
        out.append(torch.randn([R, R, R, 48]))
        for _ in range(4, M):
            out.append(torch.randn(1))
        out.append(torch.randn(M))
    return torch.cat([t.reshape(-1) for t in out])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--out", default=os.path.join(here, "..", "..", "test", "fixtures", "legacy",
                                                 "torch_draws"))
    out = p.parse_args().out
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    cases = []
    for i, c in enumerate(CASES):
        values = draw_case(c)
        name = f"case{i}.npy"
        import numpy as np
        np.save(os.path.join(out, name), values.numpy())
        cases.append(dict(c, file=name, count=int(values.numel())))
    cap = [l.split(":", 1)[1].strip() for l in torch.__config__.show().splitlines()
           if "CPU capability usage" in l]
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cpu_capability": cap[0] if cap else "unknown",
                   "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
