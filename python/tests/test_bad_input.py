"""Bad input is a Python exception saying what was wrong, never a crash or a silent coercion,
and the brain it was sent to is left as it was."""

import numpy as np
import pytest
import torch

import fieldbrain
from conftest import M, R, S, sensor_stream, small_brain

PROFILES = ["fieldbrain", "legacy"]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("bad", [torch.zeros(S + 1), torch.zeros(2, S), torch.zeros(())])
def test_a_wrong_shape_is_a_value_error_naming_both_shapes(profile, bad):
    brain = small_brain(profile=profile)
    with pytest.raises(ValueError, match=rf"sensors has shape .*expected \[{S}\]"):
        brain.step(bad)
    assert brain.cycle == 0


@pytest.mark.parametrize("bad", [torch.zeros(S, dtype=torch.float64),
                                 torch.zeros(S, dtype=torch.int64),
                                 np.zeros(S), np.zeros(S, dtype=np.float16)])
def test_a_wrong_dtype_is_a_type_error_and_nothing_is_converted(bad):
    brain = small_brain()
    with pytest.raises(TypeError, match="must be float32"):
        brain.step(bad)
    assert brain.cycle == 0


@pytest.mark.parametrize("bad", [[0.0] * S, "sensors", None, 3.0])
def test_something_that_is_no_tensor_is_a_type_error(bad):
    with pytest.raises(TypeError, match="torch.Tensor or a numpy.ndarray"):
        small_brain().step(bad)


def test_a_tensor_on_another_device_is_a_value_error_naming_the_devices():
    brain = small_brain()
    with pytest.raises(ValueError, match="is on meta, this brain runs on cpu"):
        brain.step(torch.zeros(S, device="meta"))


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_sensors_are_refused_and_the_state_is_untouched(profile, value):
    xs = sensor_stream(4)
    brain, twin = small_brain(profile=profile), small_brain(profile=profile)
    brain.step(xs[0]), twin.step(xs[0])
    bad = xs[1].clone()
    bad[2] = value
    with pytest.raises(ValueError, match="finite"):
        brain.step(bad)
    assert brain.cycle == 1
    for x in xs[1:]:
        assert torch.equal(brain.step(x), twin.step(x))


@pytest.mark.parametrize("reward", [float("nan"), float("inf")])
def test_a_non_finite_reward_is_refused(reward):
    brain = small_brain()
    with pytest.raises(ValueError, match="reward is not finite"):
        brain.step(sensor_stream(1)[0], reward=reward)
    assert brain.cycle == 0


def test_a_reward_that_is_no_number_is_a_type_error():
    with pytest.raises(TypeError, match="reward must be a number"):
        small_brain().step(sensor_stream(1)[0], reward="lots")


def test_the_legacy_profile_refuses_values_the_original_refuses():
    brain = small_brain(profile="legacy")
    x = sensor_stream(1)[0]
    x[0] = 11.0
    with pytest.raises(ValueError, match=r"\[-10, 10\]"):
        brain.step(x)
    assert brain.cycle == 0


def test_an_unknown_config_key_is_a_value_error_naming_it_and_the_closest_key():
    with pytest.raises(ValueError, match=r"unknown config key 'resolutoin'.*'resolution'"):
        fieldbrain.Brain(sensors=S, motors=M, resolutoin=8)


@pytest.mark.parametrize("kw, key", [(dict(resolution=4), "resolution"),
                                     (dict(resolution=8.5), "resolution"),
                                     (dict(field_step="fastt"), "field_step"),
                                     (dict(profile="legcy"), "profile"),
                                     (dict(legacy_clock="wall"), "legacy_clock")])
def test_a_bad_config_value_is_a_value_error_naming_the_key(kw, key):
    args = dict(resolution=R, sensors=S, motors=M)
    args.update(kw)
    with pytest.raises(ValueError, match=key):
        fieldbrain.Brain(**args)


def test_a_config_value_of_a_type_json_has_not_is_a_type_error():
    with pytest.raises(TypeError, match="seed"):
        fieldbrain.Brain(resolution=R, sensors=S, motors=M, seed=object())


@pytest.mark.parametrize("profile", PROFILES)
def test_a_damaged_save_is_a_runtime_error_naming_the_file(profile, tmp_path):
    brain = small_brain(profile=profile)
    brain.step(sensor_stream(1)[0])
    path = tmp_path / "robot.pt"
    brain.save(str(path))
    data = bytearray(path.read_bytes())
    flipped = tmp_path / "flipped.pt"
    data[len(data) // 2] ^= 0xFF
    flipped.write_bytes(bytes(data))
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(path.read_bytes()[: len(data) // 3])
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a save at all")
    for bad in (flipped, truncated, garbage):
        with pytest.raises(RuntimeError, match=bad.name):
            fieldbrain.Brain.load(str(bad))


def test_a_missing_save_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        fieldbrain.Brain.load(str(tmp_path / "absent.pt"))


def test_a_save_of_the_other_profile_is_refused_by_name(tmp_path):
    brain = small_brain(profile="legacy")
    brain.save(str(tmp_path / "legacy.pt"))
    with pytest.raises(RuntimeError, match="legacy"):
        fieldbrain.Brain.load(str(tmp_path / "legacy.pt"), profile="fieldbrain")
