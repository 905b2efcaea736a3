"""fieldbrain.BrainGroup: B robots in one call, each the same robot as a Brain alone."""

import pytest
import torch

import fieldbrain
from conftest import M, R, S, sensor_stream, small_brain


def test_a_group_steps_b_robots_and_each_equals_the_robot_alone():
    B = 3
    group = fieldbrain.BrainGroup(B, resolution=R, sensors=S, motors=M, seed=11)
    alone = [small_brain(robot=f"robot-{i}") for i in range(B)]
    xs = [sensor_stream(B, seed=k) for k in range(5)]
    for x in xs:
        motors = group.step(x)
        assert motors.shape == (B, M) and motors.dtype == torch.float32
        for i in range(B):
            assert torch.equal(motors[i], alone[i].step(x[i]))
    assert len(group) == B and group.cycle(0) == 5


def test_group_rewards_per_robot_and_read_outs_per_robot(tmp_path):
    group = fieldbrain.BrainGroup(robots=["a", "b"], resolution=R, sensors=S, motors=M)
    group.step(sensor_stream(2), reward=torch.tensor([0.5, -0.5]))
    assert group.brain_state(1)["cycle"] == 1
    assert group.field(0).shape == (64, R, R, R)
    group.save(0, str(tmp_path / "a.pt"))
    single = fieldbrain.Brain.load(str(tmp_path / "a.pt"))
    assert single.cycle == 1
    with pytest.raises(IndexError):
        group.brain_state(2)
    assert isinstance(group.module, torch.nn.Module)


def test_a_group_refuses_the_legacy_profile_saying_why():
    with pytest.raises(ValueError, match="legacy"):
        fieldbrain.BrainGroup(2, profile="legacy", resolution=R, sensors=S, motors=M)


def test_a_group_refuses_a_sensor_batch_of_another_size():
    group = fieldbrain.BrainGroup(2, resolution=R, sensors=S, motors=M)
    with pytest.raises(ValueError, match=r"shape"):
        group.step(sensor_stream(3))
