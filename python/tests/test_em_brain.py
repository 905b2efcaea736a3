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


def test_the_reward_shaping_read_out_holds_the_rewards_above_the_threshold_as_attractors():
    # The original's rule: a reward with |r| > 0.1 becomes an attractor (strength |r|, valence
    # its sign, aged once by the same cycle's evolution and once per later cycle) and enters the
    # reward history; at most 20 attractors live, the oldest go first.
    brain = UnifiedFieldBrain(sensory_dim=6, motor_dim=3, spatial_resolution=8)
    pattern = [0.8, 0.05, -0.5, 0.3, -0.1, 0.0]  # 0.05, -0.1 and 0 stay below the threshold
    rewards = [pattern[n % len(pattern)] for n in range(45)]
    for x, r in zip(sensor_stream(45).tolist(), rewards):
        brain.process_robot_cycle(x + [r])
    state = brain.reward_shaping_state()
    rewarded = [(n, r) for n, r in enumerate(rewards) if abs(r) > 0.1]
    assert state["reward_history"] == [r for _, r in rewarded]
    assert state["last_reward_signal"] == rewards[-1]
    live = rewarded[-20:]
    assert [(a["strength"], a["valence"], a["age"]) for a in state["attractors"]] == \
        [(abs(r), 1.0 if r > 0 else -1.0, len(rewards) - n) for n, r in live]
    assert all(a["pattern"].shape == (8, 8, 8, 64) for a in state["attractors"])
    assert brain.topology_shaper.reward_history == state["reward_history"]


def test_the_topology_regions_read_out_names_each_region_as_the_original_does():
    brain = UnifiedFieldBrain(sensory_dim=6, motor_dim=3, spatial_resolution=8)
    for x in sensor_stream(12).tolist():
        brain.process_robot_cycle(x)
    state = brain.topology_regions_state()
    regions = state["regions"]
    assert regions, "12 cycles detect regions (cycles 0, 5 and 10)"
    ids = [r["region_id"] for r in regions]
    assert ids == [f"region_{k}" for k in range(len(ids))]  # numbered as found, none removed
    assert state["region_count"] == state["discovery_count"] == len(ids)
    assert list(brain.topology_region_system.regions) == ids
    for r in regions:
        assert all(0 <= c < 8 for c in r["spatial_center"]) and 0 <= r["feature_center"] < 64
        assert r["discovery_time"] in (1000.0, 1000.25, 1000.5)  # the detecting cycles' clock
        assert all(0 <= s < 6 for s in r["sensor_indices"])
        assert r["activation_pattern"].dim() == 3
    # each activation is recorded with the clock of its cycle and a region that exists
    assert {h[1] for h in state["activation_history"]} <= set(ids)
    assert {h[0] for h in state["activation_history"]} <= {1000.0, 1000.25, 1000.5}


def test_the_read_outs_are_copies_that_leave_the_brain_untouched():
    brain = UnifiedFieldBrain(sensory_dim=6, motor_dim=3, spatial_resolution=8)
    for x in sensor_stream(6).tolist():
        brain.process_robot_cycle(x + [0.9])
    field = brain.unified_field.clone()
    shaping, regions = brain.reward_shaping_state(), brain.topology_regions_state()
    attractor = shaping["attractors"][0]["pattern"].clone()
    region = regions["regions"][0]["activation_pattern"].clone()
    shaping["attractors"][0]["pattern"].add_(1.0)
    regions["regions"][0]["activation_pattern"].zero_()
    assert torch.equal(brain.reward_shaping_state()["attractors"][0]["pattern"], attractor)
    assert torch.equal(brain.topology_regions_state()["regions"][0]["activation_pattern"], region)
    assert torch.equal(brain.unified_field, field)
