"""fieldbrain.em_brain: em-brain's in-process call backed by the legacy profile."""

import pytest
import torch

import fieldbrain
from fieldbrain.em_brain import UnifiedBrainFactory, UnifiedFieldBrain
from conftest import sensor_stream

# The keys of em-brain ef2bdb8's UnifiedFieldBrain._create_brain_state (the original's code).
ORIGINAL_KEYS = {"cycle", "cycle_time_ms", "field_information", "max_activation",
                 "prediction_confidence", "memory_saturation", "cognitive_mode",
                 "information_state", "evolution_state", "topology_shaping", "topology_regions",
                 "tensor_shape", "device", "predictive_phases", "sensory_organization",
                 "temporal_basis", "timestamp"}


def test_process_robot_cycle_returns_python_float_motors_and_the_original_state_keys():
    brain = UnifiedFieldBrain(sensory_dim=6, motor_dim=3, spatial_resolution=8)
    motors, state = brain.process_robot_cycle([0.5] * 6)
    assert isinstance(motors, list) and len(motors) == 3
    assert all(isinstance(m, float) and -1 < m < 1 for m in motors)
    assert set(state) == ORIGINAL_KEYS
    assert set(state["topology_regions"]) == {"total", "active", "abstract", "causal_links",
                                              "activated_now"}
    assert state["cycle"] == 1 and state["tensor_shape"] == [8, 8, 8, 64]
    assert state["timestamp"] == 1000.0                 # the pinned clock of cycle 0


def test_the_adapter_is_the_legacy_profile_brain_of_the_same_seed():
    xs = sensor_stream(5)
    adapter = UnifiedFieldBrain(sensory_dim=6, motor_dim=3, spatial_resolution=8, seed=5)
    brain = fieldbrain.Brain(profile="legacy", resolution=8, sensors=6, motors=3, seed=5)
    for x in xs:
        motors, _ = adapter.process_robot_cycle(x.tolist())
        assert torch.equal(torch.tensor(motors, dtype=torch.float32), brain.step(x))


def test_a_reward_rides_as_the_last_element_as_in_the_original():
    a = UnifiedFieldBrain(sensory_dim=6, motor_dim=3, spatial_resolution=8)
    b = UnifiedFieldBrain(sensory_dim=6, motor_dim=3, spatial_resolution=8)
    xs = sensor_stream(25).tolist()
    ma = [a.process_robot_cycle(x)[0] for x in xs]
    mb = [b.process_robot_cycle(x + [0.8])[0] for x in xs]
    assert ma != mb


def test_the_factory_builds_the_brain_as_its_server_does():
    wrapper = UnifiedBrainFactory({"quiet_mode": True}).create(spatial_resolution=8,
                                                               sensory_dim=6, motor_dim=3)
    motors, state = wrapper.brain.process_robot_cycle([0.1] * 6)
    assert len(motors) == 3 and state["predictive_phases"]["enabled_count"] == 3


def test_bad_input_is_a_value_error_not_an_error_state():
    brain = UnifiedFieldBrain(sensory_dim=6, motor_dim=3, spatial_resolution=8)
    with pytest.raises(ValueError, match="6"):
        brain.process_robot_cycle([0.5] * 4)
    with pytest.raises(ValueError, match="finite"):
        brain.process_robot_cycle([float("nan")] * 6)
    assert brain.brain_cycles == 0


def test_field_dynamics_read_outs_follow_the_cycles():
    brain = UnifiedFieldBrain(sensory_dim=6, motor_dim=3, spatial_resolution=8)
    for x in sensor_stream(3).tolist():
        brain.process_robot_cycle(x)
    assert brain.field_dynamics.evolution_count == 3
    props = brain.field_dynamics.get_emergent_properties()
    assert 0 <= props["smoothed_confidence"] <= 1
    assert brain.unified_field.shape == (8, 8, 8, 64)
