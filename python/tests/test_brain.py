"""fieldbrain.Brain: the cycle, its read-outs and its saves, for both profiles."""

import numpy as np
import pytest
import torch

import fieldbrain
from conftest import M, R, S, sensor_stream, small_brain

PROFILES = ["fieldbrain", "legacy"]


@pytest.mark.parametrize("profile", PROFILES)
def test_step_returns_float32_motors_in_the_open_unit_interval(profile):
    brain = small_brain(profile=profile)
    for x in sensor_stream(5):
        motors = brain.step(x)
        assert isinstance(motors, torch.Tensor)
        assert motors.dtype == torch.float32 and motors.shape == (M,)
        assert torch.all(motors.abs() < 1)
    assert brain.cycle == 5


@pytest.mark.parametrize("profile", PROFILES)
def test_a_seed_fixes_the_trajectory_and_another_seed_changes_it(profile):
    xs = sensor_stream(6)
    a, b, c = (small_brain(profile=profile, seed=s) for s in (3, 3, 4))
    ma = torch.stack([a.step(x) for x in xs])
    mb = torch.stack([b.step(x) for x in xs])
    mc = torch.stack([c.step(x) for x in xs])
    assert torch.equal(ma, mb)
    assert not torch.equal(ma, mc)


def test_numpy_input_gives_the_same_motors_as_torch_input():
    xs = sensor_stream(4)
    a, b = small_brain(), small_brain()
    for x in xs:
        assert torch.equal(a.step(x), b.step(x.numpy()))


def test_a_reward_changes_the_trajectory():
    xs = sensor_stream(30)
    a, b = small_brain(), small_brain()
    ma = torch.stack([a.step(x) for x in xs])
    mb = torch.stack([b.step(x, reward=0.9) for x in xs])
    assert not torch.equal(ma, mb)


@pytest.mark.parametrize("profile", PROFILES)
def test_brain_state_reports_the_telemetry_of_the_cycle(profile):
    brain = small_brain(profile=profile)
    for x in sensor_stream(3):
        brain.step(x)
    state = brain.brain_state()
    # The keys docs/telemetry and the server report for each profile.
    for key in ("cycle", "prediction_confidence", "field_information", "max_activation",
                "cycle_time_ms"):
        assert key in state, key
    assert state["cycle"] == 3
    assert 0.0 <= state["prediction_confidence"] <= 1.0
    if profile == "legacy":
        assert state["profile"] == "legacy" and state["seed"] == 11


def test_field_is_the_live_state_not_a_copy():
    brain = small_brain()
    field = brain.field
    assert field.shape == (64, R, R, R)
    before = field.clone()
    brain.step(sensor_stream(1)[0])
    assert not torch.equal(field, before)           # the same tensor saw the cycle
    assert torch.equal(field, brain.field)
    buffers = dict(brain.module.named_buffers())
    assert buffers["field"].data_ptr() == field.data_ptr()


def test_legacy_field_has_the_original_layout():
    brain = small_brain(profile="legacy")
    brain.step(sensor_stream(1)[0])
    assert brain.field.shape == (R, R, R, 64)


def test_the_module_tree_is_a_torch_module_with_buffers_and_a_state_dict():
    brain = small_brain()
    module = brain.module
    assert isinstance(module, torch.nn.Module)
    names = [n for n, _ in module.named_buffers()]
    assert "field" in names and len(names) > 5
    assert any("." in n for n in names)                # submodules' buffers, by their paths
    children = dict(module.named_children())
    assert children and all(isinstance(c, torch.nn.Module) for c in children.values())
    sd = module.state_dict()
    assert set(sd) == set(names)
    assert all(t.shape[0] == 1 for t in sd.values())   # robot on dimension 0


@pytest.mark.parametrize("profile", PROFILES)
def test_a_loaded_save_continues_exactly_as_the_saved_brain(profile, tmp_path):
    xs = sensor_stream(12)
    brain = small_brain(profile=profile)
    for x in xs[:6]:
        brain.step(x)
    path = tmp_path / "robot.pt"
    brain.save(str(path))
    loaded = fieldbrain.Brain.load(str(path))
    assert loaded.profile == profile and loaded.cycle == 6
    for x in xs[6:]:
        assert torch.equal(brain.step(x), loaded.step(x))
    # the file is a plain torch save (the server's format)
    archive = torch.load(str(path))
    assert "sha256" in archive and "tensors" in archive


def test_a_named_robot_is_seeded_as_the_server_seeds_it():
    xs = sensor_stream(5)
    a = small_brain(robot="json:alpha")
    b = small_brain(robot="json:alpha")
    c = small_brain(robot="json:beta")
    ma = torch.stack([a.step(x) for x in xs])
    assert torch.equal(ma, torch.stack([b.step(x) for x in xs]))
    assert not torch.equal(ma, torch.stack([c.step(x) for x in xs]))


def test_fast_field_step_runs_through_the_fused_operators():
    brain = small_brain(field_step="fast")
    for x in sensor_stream(3):
        assert brain.step(x).shape == (M,)


def test_steps_of_two_brains_in_two_threads_match_sequential_steps():
    import threading
    xs = sensor_stream(8)
    seq = [small_brain(seed=s) for s in (1, 2)]
    expected = [torch.stack([b.step(x) for x in xs]) for b in seq]
    par = [small_brain(seed=s) for s in (1, 2)]
    got = [None, None]

    def run(i):
        got[i] = torch.stack([par[i].step(x) for x in xs])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert torch.equal(got[0], expected[0]) and torch.equal(got[1], expected[1])


def test_the_legacy_module_tree_holds_the_original_parts_tensors():
    brain = small_brain(profile="legacy")
    brain.step(sensor_stream(1)[0])
    buffers = dict(brain.module.named_buffers())
    assert buffers["field"].data_ptr() == brain.field.data_ptr()
    assert buffers["field_dynamics.wave_vectors"].shape[1] == 3
    for name in ("immediate", "short_term", "long_term", "abstract"):
        assert "hierarchy." + name + "_weights" in buffers



@pytest.mark.parametrize("profile", PROFILES)
def test_the_cycle_runs_without_the_gil(profile):
    brain = small_brain(profile=profile)
    assert brain._cycle_held_gil            # nothing stepped yet
    brain.step(sensor_stream(1)[0])
    assert not brain._cycle_held_gil        # PyGILState_Check() inside step, around the cycle
