#!/usr/bin/python3
"""numpy's legacy generator outputs for test/legacy/numpy_random_test.cpp.

Writes into --out (default test/fixtures/legacy/numpy_random/):
  seeds.npy        int64 [1000]        the seeds (0..994 and five near the uint32 edges)
  randint_3_6.npy  int64 [1000, 8]     np.random.seed(s); 8 x np.random.randint(3, 6)
  ranges.npy       int64 [K, 2]        (low, high) of the other ranges
  randint_ranges.npy int64 [K, 200, 8] np.random.seed(seeds[j]); 8 x randint(low, high), j < 200
  random_sample.npy float64 [50, 8]    np.random.seed(seeds[j]); 8 x np.random.random_sample()
Run: /usr/bin/python3 scripts/legacy/make_numpy_fixture.py
"""
import argparse
import os

import numpy as np

SEEDS = list(range(995)) + [12345, 2**31 - 1, 2**31, 2**32 - 2, 2**32 - 1]
RANGES = [(0, 2), (0, 10), (-5, 5), (3, 4), (0, 2**31), (7, 2**32 + 7), (0, 2**40),
          (-2**62, 2**62)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--out", default=os.path.join(here, "..", "..", "test", "fixtures", "legacy",
                                                 "numpy_random"))
    out = p.parse_args().out
    os.makedirs(out, exist_ok=True)
    seeds = np.array(SEEDS, dtype=np.int64)
    a = np.zeros((len(SEEDS), 8), dtype=np.int64)
    for j, s in enumerate(SEEDS):
        np.random.seed(s)
        a[j] = [np.random.randint(3, 6) for _ in range(8)]
    b = np.zeros((len(RANGES), 200, 8), dtype=np.int64)
    for k, (lo, hi) in enumerate(RANGES):
        for j, s in enumerate(SEEDS[:200]):
            np.random.seed(s)
            b[k, j] = [np.random.randint(lo, hi) for _ in range(8)]
    c = np.zeros((50, 8))
    for j, s in enumerate(SEEDS[:50]):
        np.random.seed(s)
        c[j] = [np.random.random_sample() for _ in range(8)]
    np.save(os.path.join(out, "seeds.npy"), seeds)
    np.save(os.path.join(out, "randint_3_6.npy"), a)
    np.save(os.path.join(out, "ranges.npy"), np.array(RANGES, dtype=np.int64))
    np.save(os.path.join(out, "randint_ranges.npy"), b)
    np.save(os.path.join(out, "random_sample.npy"), c)
    with open(os.path.join(out, "versions.txt"), "w") as f:
        f.write(f"numpy {np.__version__}\n")


if __name__ == "__main__":
    main()
