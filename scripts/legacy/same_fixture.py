#!/usr/bin/python3
"""Compare two legacy fixture folders array by array: are two runs of run_original.py the same?

  /usr/bin/python3 scripts/legacy/same_fixture.py DIR_A DIR_B

Prints one line per .npy present in both (equal bit for bit, or the largest difference and the
first differing cycle) and whether draws.json agrees; exit 0 when everything is equal, 1 when
not, 2 when a folder has no meta.json.
"""
import json
import os
import sys

import numpy as np


def main(a, b):
    for d in (a, b):
        if not os.path.isfile(os.path.join(d, "meta.json")):
            print(f"same_fixture.py: {d} has no meta.json", file=sys.stderr)
            return 2
    names = sorted(f for f in os.listdir(a) if f.endswith(".npy") and
                   os.path.isfile(os.path.join(b, f)))
    same = True
    for name in names:
        x, y = np.load(os.path.join(a, name)), np.load(os.path.join(b, name))
        if x.shape == y.shape and x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True):
            print(f"  {name:28s} equal")
            continue
        same = False
        if x.shape != y.shape:
            print(f"  {name:28s} DIFFERENT shapes {x.shape} vs {y.shape}")
            continue
        diff = np.abs(x.astype(np.float64) - y.astype(np.float64)).reshape(len(x), -1).max(axis=1)
        first = int(np.argmax(diff > 0))
        print(f"  {name:28s} DIFFERENT: max |a - b| {diff.max():.3g}, first at row {first}")
    draws = [os.path.join(d, "draws.json") for d in (a, b)]
    if all(os.path.isfile(p) for p in draws):
        equal = json.load(open(draws[0])) == json.load(open(draws[1]))
        same &= equal
        print(f"  {'draws.json':28s} {'equal' if equal else 'DIFFERENT'}")
    print("identical" if same else "NOT identical")
    return 0 if same else 1


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
