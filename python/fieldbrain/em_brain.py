"""em-brain's in-process call, backed by fieldbrain's legacy profile.

An em-brain script (commit ef2bdb8) that builds its brain in-process runs with one import
changed:

    # from src.brains.field.unified_field_brain import UnifiedFieldBrain
    from fieldbrain.em_brain import UnifiedFieldBrain

    brain = UnifiedFieldBrain(sensory_dim=8, motor_dim=3, spatial_resolution=32)
    motor_output, brain_state = brain.process_robot_cycle(sensory_input)

`process_robot_cycle(sensory_input) -> (motor_output, brain_state)` takes the original's list
(S numbers, or S + 1 with the reward last), returns the M motors as Python floats and the
original's brain_state dict (its keys; the values the port keeps, None where it keeps none:
docs/python.md lists them). The brain is the legacy profile (brain/legacy, docs/legacy.md): the
original's cycle number for number under the pins of scripts/legacy/run_original.py: seeded
generators (seed=, default 42), one CPU thread's arithmetic, the planner's background
discovery off, and a fixed clock (cycle n reads 1000 + 0.05 n s) unless clock="wall".
It is built as em-brain's server factory builds it (hierarchical prediction, strategic
planning and active vision enabled), whether the script calls the enable_* methods or not.

Differences from the original, by design: a bad input (wrong length, a non-finite value, a
value outside [-10, 10]) raises ValueError naming it instead of returning an "error" state;
the brain runs on the CPU whatever `device` says.
"""

import time as _time
import types as _types

from . import _C

T0 = 1000.0  # the fixed clock of the legacy profile (brain/brain_config.h kLegacyClockStartS)
DT = 0.05

__all__ = ["UnifiedFieldBrain", "UnifiedBrainFactory"]


class _FieldDynamicsView:
    """The few field_dynamics read-outs em-brain scripts print (from the brain state)."""

    def __init__(self, brain):
        self._brain = brain

    def _evolution(self):
        return self._brain._core.brain_state()["evolution_state"]

    @property
    def evolution_count(self):
        return self._evolution()["evolution_cycles"]

    @property
    def self_modification_strength(self):
        return self._evolution()["self_modification_strength"]

    @property
    def smoothed_confidence(self):
        return self._evolution()["smoothed_confidence"]

    @property
    def smoothed_information(self):
        return self._evolution()["smoothed_information"]

    @property
    def cycles_without_input(self):
        return self._evolution()["cycles_without_input"]

    def get_emergent_properties(self):
        e = self._evolution()
        return {"evolution_cycles": e["evolution_cycles"],
                "self_modification_strength": e["self_modification_strength"],
                "smoothed_information": e["smoothed_information"],
                "smoothed_confidence": e["smoothed_confidence"],
                "cycles_without_input": e["cycles_without_input"]}


class _TopologyView:
    """topology_region_system.regions: region ID -> the region's fields as attributes, named as
    the original's TopologyRegion's (a copy; UnifiedFieldBrain.topology_regions_state())."""

    def __init__(self, brain):
        self._brain = brain

    @property
    def regions(self):
        return {r["region_id"]: _types.SimpleNamespace(**r)
                for r in self._brain.topology_regions_state()["regions"]}


class _ShaperView:
    """topology_shaper.attractors / reward_history (copies; reward_shaping_state())."""

    def __init__(self, brain):
        self._brain = brain

    @property
    def attractors(self):
        return self._brain.reward_shaping_state()["attractors"]

    @property
    def reward_history(self):
        return self._brain.reward_shaping_state()["reward_history"]


class UnifiedFieldBrain:
    """em-brain's UnifiedFieldBrain, in-process, as fieldbrain's legacy profile."""

    def __init__(self, sensory_dim=16, motor_dim=5, spatial_resolution=32, device=None,
                 quiet_mode=False, *, seed=42, clock="fixed"):
        if clock not in ("fixed", "wall"):
            raise ValueError(f"clock={clock!r}: 'fixed' (the pinned original's) or 'wall'")
        self.sensory_dim = int(sensory_dim)
        self.motor_dim = int(motor_dim)
        self.spatial_resolution = int(spatial_resolution)
        self.quiet_mode = quiet_mode
        self.seed = seed
        self._clock = clock
        self._core = _C.LegacyCore(self.sensory_dim, self.motor_dim, self.spatial_resolution,
                                   seed)
        self._last_cycle_time = 0.0
        self.field_dynamics = _FieldDynamicsView(self)
        self.topology_region_system = _TopologyView(self)
        self.topology_shaper = _ShaperView(self)
        self.device = "cpu"
        self.use_strategic_planning = True
        self.use_active_vision = True

    # The factory's enable_* calls: the legacy profile always has them on.
    def enable_hierarchical_prediction(self, enable=True):
        pass

    def enable_strategic_planning(self, enable=True):
        pass

    def enable_active_vision(self, enable=True, *args, **kwargs):
        pass

    @property
    def brain_cycles(self):
        return self._core.cycle

    @property
    def unified_field(self):
        """The field [R, R, R, 64] (a view of the state, as the original's tensor)."""
        return self._core.field

    @property
    def module(self):
        """The brain's state as a torch.nn.Module tree: buffer "field" [R, R, R, 64],
        submodules "field_dynamics" (wave_vectors) and "hierarchy" (the four timescales'
        weights, named as the original's hierarchical predictor's)."""
        return self._core.module

    def topology_regions_state(self):
        """The topology regions as the port keeps them, under the original's names (copies):
        {"regions": [per region, in the original's dict order: region_id, spatial_center,
        feature_center, activation_pattern (tensor), mean_activation, stability, coherence,
        discovery_time, last_activation, activation_count, total_strength, importance,
        consolidation_level, associated_regions, causal_predecessors, causal_successors,
        abstraction_level, is_sensory_predictive, sensor_indices, prediction_errors (the
        "error" of each sensory_prediction_history entry), prediction_confidence,
        prediction_momentum (tensor or None), motor_sequence, behavioral_monotony],
        "region_count", "discovery_count", "activation_history": [(time, id, strength)],
        "last_cleanup_time"}."""
        return self._core.topology_regions()

    def reward_shaping_state(self):
        """The reward shaping as the port keeps it (copies): {"attractors": [{"pattern",
        "strength", "valence", "age"}, oldest first], "reward_history": [...],
        "last_reward_signal": the reward the last cycle read}."""
        return self._core.reward_shaping()

    def _now(self):
        if self._clock == "wall":
            return _time.time()
        return T0 + self._core.cycle * DT

    def process_robot_cycle(self, sensory_input):
        """One cycle: (motor_output: list of M floats, brain_state: dict)."""
        now = self._now()
        started = _time.perf_counter()
        motors = self._core.process([float(v) for v in sensory_input], now)
        self._last_cycle_time = _time.perf_counter() - started
        return motors, self._create_brain_state(now)

    def _create_brain_state(self, now=None):
        s = self._core.brain_state()
        R = self.spatial_resolution
        evolution = dict(s["evolution_state"])
        evolution["working_memory"] = None  # not kept by the port
        shaping = s["topology_shaping"]
        organization = s["sensory_organization"]
        return {
            "cycle": s["cycle"],
            "cycle_time_ms": self._last_cycle_time * 1000.0,
            "field_information": s["field_information"],
            "max_activation": s["max_activation"],
            "prediction_confidence": s["prediction_confidence"],
            "memory_saturation": s["memory_saturation"],
            "cognitive_mode": s["cognitive_mode"],
            "information_state": dict(s["information_state"]),
            "evolution_state": evolution,
            "topology_shaping": {
                "active_attractors": shaping["active_attractors"],
                "total_rewards": shaping["total_rewards"],
                "avg_reward": None,
                "strongest_attractor": None,
            },
            "topology_regions": {
                "total": s["topology_regions"],
                "active": None,
                "abstract": None,
                "causal_links": s["topology_causal_links"],
                "activated_now": s["activated_now"],
            },
            "tensor_shape": [R, R, R, 64],
            "device": "cpu",
            "predictive_phases": {
                "phase_3_hierarchical": True,
                "strategic_planning": True,
                "phase_5_active_vision": True,
                "enabled_count": 3,
            },
            "sensory_organization": {
                "unique_patterns": organization["unique_patterns"],
                "mapping_events": organization["mapping_events"],
                "reorganization_count": None,
                "clustering_coefficient": None,
                "occupancy_ratio": organization["occupancy_ratio"],
            },
            "temporal_basis": s["temporal_basis"],
            "timestamp": self._now() if now is None else now,
        }

    def save(self, path):
        """The legacy profile's save (the server's <key>.legacy.pt format)."""
        self._core.save(str(path))

    def load(self, path):
        self._core.load(str(path))


class _BrainWrapper:
    """What UnifiedBrainFactory.create returns: the brain as .brain."""

    def __init__(self, brain):
        self.brain = brain

    def process_sensory_input(self, sensory_input):
        motors, _ = self.brain.process_robot_cycle(sensory_input)
        return motors


class UnifiedBrainFactory:
    """em-brain's factory: create(...) builds the brain as its server does."""

    def __init__(self, config=None):
        self.config = dict(config or {})

    def create(self, field_dimensions=None, spatial_resolution=None, sensory_dim=16,
               motor_dim=5, **_ignored):
        brain = UnifiedFieldBrain(sensory_dim=sensory_dim, motor_dim=motor_dim,
                                  spatial_resolution=spatial_resolution or 32,
                                  quiet_mode=self.config.get("quiet_mode", False))
        return _BrainWrapper(brain)
