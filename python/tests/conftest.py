"""Shared set-up of the pytest suite (python/tests; run through CTest as python.pytest).

The package under test is the build tree's (PYTHONPATH=build/python, set by CTest). Brains are
small (R = 8) so the whole suite stays well under a minute on one core.
"""

import os

import pytest
import torch

torch.set_num_threads(1)

import fieldbrain  # noqa: E402  (after torch, as the package itself does)

SOURCE_DIR = os.environ.get(
    "FIELDBRAIN_SOURCE_DIR",
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

S, M, R = 6, 3, 8


def small_brain(**kw):
    args = dict(resolution=R, sensors=S, motors=M, seed=11)
    args.update(kw)
    return fieldbrain.Brain(**args)


def sensor_stream(n, s=S, seed=0):
    """n reproducible sensor vectors [n, s] float32 in [-1, 1]."""
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, s, generator=g) * 2 - 1


cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
