"""torch.ops.fieldbrain: the fused operators are visible after `import fieldbrain` (registered
once, by the operator library the extension links) and compute what their contracts say."""

import os
import sys

import pytest
import torch

import fieldbrain
from conftest import SOURCE_DIR

sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts", "ops"))
sys.path.insert(0, os.path.join(SOURCE_DIR, "scripts", "reference"))


def test_the_operators_are_registered_once_under_torch_ops_fieldbrain():
    names = [str(s).split("(")[0] for s in torch._C._jit_get_all_schemas()
             if str(s).startswith("fieldbrain::")]
    for op in ("field_step", "field_step_out", "field_step_seeded", "field_step_seeded_out",
               "philox_normal_out", "field_readout", "attractor_pull_"):
        assert names.count("fieldbrain::" + op) == 1, op
    assert fieldbrain.ops is torch.ops.fieldbrain
    assert torch.ops.fieldbrain.field_step_cpu_isa() in ("default", "avx2", "avx512")


def test_every_operator_named_in_docs_python_md_exists():
    with open(os.path.join(SOURCE_DIR, "docs", "python.md")) as f:
        text = f.read()
    import re
    documented = set(re.findall(r"torch\.ops\.fieldbrain\.([a-z_]+)\(", text))
    assert len(documented) >= 5
    registered = {str(s).split("(")[0][len("fieldbrain::"):] for s in torch._C._jit_get_all_schemas()
                  if str(s).startswith("fieldbrain::")}
    assert documented <= registered, documented - registered


def test_field_step_matches_the_python_reference():
    field_step_parity = pytest.importorskip("field_step_parity")
    import fieldbrain_ref
    inputs = field_step_parity.make_inputs(2, 8, seed=5, content_scale=1.6, has_ef=1)
    got = torch.ops.fieldbrain.field_step(*inputs)
    ref = fieldbrain_ref.field_step(*inputs)
    assert got.shape == ref.shape == (2, 64, 8, 8, 8)
    tolerance = getattr(field_step_parity, "STEP_TOLERANCE", 1e-4)  # the parity script's own
    assert (got - ref).abs().max().item() <= tolerance


def test_field_step_out_writes_into_the_given_tensor():
    field_step_parity = pytest.importorskip("field_step_parity")
    inputs = field_step_parity.make_inputs(1, 8, seed=6)
    out = torch.empty(1, 64, 8, 8, 8)
    ptr = out.data_ptr()
    res = torch.ops.fieldbrain.field_step_out(*inputs, out)
    assert res.data_ptr() == ptr
    assert torch.equal(out, torch.ops.fieldbrain.field_step(*inputs))


def test_the_seeded_step_equals_the_step_fed_the_philox_noise_of_stream_2():
    field_step_parity = pytest.importorskip("field_step_parity")
    field, _, wave, ef, scalars = field_step_parity.make_inputs(2, 8, seed=7)
    key = torch.tensor([[12345, 3], [777, 9]], dtype=torch.int64)
    noise = torch.empty(2, 48, 8, 8, 8)
    torch.ops.fieldbrain.philox_normal_out(key, 2, noise)
    seeded = torch.ops.fieldbrain.field_step_seeded(field, key, wave, ef, scalars)
    assert torch.equal(seeded, torch.ops.fieldbrain.field_step(field, noise, wave, ef, scalars))


def test_philox_normal_is_a_reproducible_standard_normal_stream_per_key_and_stream():
    key = torch.tensor([[1, 0], [2, 0]], dtype=torch.int64)
    a, b, c = torch.empty(2, 20000), torch.empty(2, 20000), torch.empty(2, 20000)
    torch.ops.fieldbrain.philox_normal_out(key, 1, a)
    torch.ops.fieldbrain.philox_normal_out(key, 1, b)
    torch.ops.fieldbrain.philox_normal_out(key, 3, c)
    assert torch.equal(a, b)
    assert not torch.equal(a, c) and not torch.equal(a[0], a[1])
    assert abs(a.mean().item()) < 0.03 and abs(a.std().item() - 1) < 0.03


def test_an_operator_refuses_bad_arguments_with_a_runtime_error():
    with pytest.raises(RuntimeError):
        torch.ops.fieldbrain.field_step(torch.zeros(1, 3, 8, 8, 8), torch.zeros(1, 48, 8, 8, 8),
                                        torch.zeros(1, 8, 8, 8), torch.zeros(1, 8, 8, 8),
                                        torch.zeros(1, 8))
