"""Parity in one process: the user's em-brain checkout (EM_BRAIN, commit ef2bdb8) imported
beside fieldbrain, pinned as scripts/legacy/run_original.py pins it (seeds, CPU, fake clock,
planner off, one thread), against fieldbrain.em_brain on the same inputs: motors and prediction
confidence equal, cycle by cycle. Skipped, saying so, without EM_BRAIN."""

import contextlib
import importlib.util
import io
import os
import sys

import pytest
import torch

from conftest import SOURCE_DIR

EM_BRAIN = os.environ.get("EM_BRAIN", "")
pytestmark = pytest.mark.skipif(
    not EM_BRAIN, reason="EM_BRAIN is not set: export EM_BRAIN=/path/to/em-brain (commit ef2bdb8) "
                         "for the in-process parity test against the original")


@pytest.fixture(scope="module")
def run_original():
    """scripts/legacy/run_original.py as a module (its import-time pins on the environment are
    undone afterwards, so the rest of the suite still sees CUDA)."""
    saved = dict(os.environ)
    spec = importlib.util.spec_from_file_location(
        "run_original", os.path.join(SOURCE_DIR, "scripts", "legacy", "run_original.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    os.environ.clear()
    os.environ.update(saved)
    return module


class _NoTrace:
    """run_original's draw trace is a debugging aid that wraps torch's generators process-wide;
    it changes no number, so the test leaves torch alone."""

    def install(self):
        pass


def _original_brain(ro, R, S, M, seed, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # P2
    if hasattr(torch.backends, "mps"):
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    try:
        path, adaptive, factory_mod = ro.import_checkout(EM_BRAIN)
    except ro.Incompatible as e:
        pytest.fail(f"EM_BRAIN={EM_BRAIN} is not an em-brain ef2bdb8 checkout: {e}")
    clock = ro.FakeClock(ro.T0_DEFAULT, ro.DT_DEFAULT)
    brain = ro.build_brain(path, adaptive, factory_mod, R, S, M, seed, clock, _NoTrace())
    ro.pin_planner(brain, "off", clock, [])
    return brain, clock


@pytest.mark.parametrize("R, S, M, stream, rewards, cycles", [
    (8, 6, 3, "random", True, 120),
    (16, 24, 4, "smooth", False, 100),
])
def test_motors_and_confidence_equal_the_original_cycle_by_cycle(run_original, monkeypatch, R, S,
                                                                 M, stream, rewards, cycles):
    from fieldbrain.em_brain import UnifiedFieldBrain
    seed = 11
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # P5
    try:
        original, clock = _original_brain(run_original, R, S, M, seed, monkeypatch)
        port = UnifiedFieldBrain(sensory_dim=S, motor_dim=M, spatial_resolution=R, seed=seed)
        inputs = run_original.make_stream(stream, rewards, S, cycles, seed)
        for n in range(cycles):
            clock.n = n
            with contextlib.redirect_stdout(io.StringIO()):
                want_motors, want_state = original.process_robot_cycle(inputs[n].tolist())
            assert "error" not in want_state, want_state.get("error")
            got_motors, got_state = port.process_robot_cycle(inputs[n].tolist())
            assert got_motors == list(want_motors), f"cycle {n}"
            assert got_state["prediction_confidence"] == want_state["prediction_confidence"], \
                f"cycle {n}"
            assert got_state["cognitive_mode"] == want_state["cognitive_mode"], f"cycle {n}"
            assert got_state["topology_regions"]["total"] == \
                want_state["topology_regions"]["total"], f"cycle {n}"
        # Module by module, tensor by tensor, after the run: the field (its evolution), the wave
        # vectors of the field dynamics and the hierarchical predictor's learnt weights.
        ours = dict(port.module.named_buffers())
        assert torch.equal(ours["field"], original.unified_field)
        assert torch.equal(ours["field_dynamics.wave_vectors"], original.field_dynamics.wave_vectors)
        theirs = original.predictive_field.hierarchical_system
        for name in ("immediate", "short_term", "long_term", "abstract"):
            assert torch.equal(ours[f"hierarchy.{name}_weights"],
                               getattr(theirs, f"{name}_weights")), name
    finally:
        torch.set_num_threads(threads)
