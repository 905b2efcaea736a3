"""fieldbrain.hrr: the HRR algebra, vocabularies, clean-up memories and their checked saves."""

import math

import pytest
import torch

from fieldbrain import hrr
from conftest import cuda

D = 512


def test_unbinding_a_unitary_role_recovers_the_filler_exactly():
    role = hrr.random_unitary([D], seed=1)
    filler = hrr.random([D], seed=2)
    back = hrr.unbind(hrr.bind(role, filler), role)
    assert hrr.cosine(back, filler).item() > 0.9999


def test_bind_is_circular_convolution():
    a, b = torch.randn(2, 7, dtype=torch.float64)
    direct = torch.stack([sum(a[j] * b[(i - j) % 7] for j in range(7)) for i in range(7)])
    assert torch.allclose(hrr.bind(a, b), direct, atol=1e-12)


def test_inverse_is_the_involution_and_an_involution_twice_is_the_identity():
    a = hrr.random([D], seed=3)
    assert torch.equal(hrr.inverse(hrr.inverse(a)), a)
    assert hrr.inverse(a)[0] == a[0] and hrr.inverse(a)[1] == a[-1]


def test_operations_are_batched_over_leading_dimensions():
    roles = hrr.random_unitary([4, 3, D], seed=4)
    fillers = hrr.random([4, 3, D], seed=5)
    traces = hrr.bind(roles, fillers)
    assert traces.shape == (4, 3, D)
    for i in range(4):
        assert torch.allclose(traces[i, 1], hrr.bind(roles[i, 1], fillers[i, 1]), atol=1e-6)


def test_bundle_and_cleanup_answer_which_filler_a_role_holds():
    vocab = hrr.Vocabulary(D, seed=9)
    names = [f"item{i}" for i in range(20)]
    vocab.add(names)
    roles = hrr.random_unitary([3, D], seed=6)
    fillers = torch.stack([vocab.get(n) for n in ("item3", "item7", "item11")])
    record = hrr.bundle(hrr.bind(roles, fillers))
    memory = hrr.ItemMemory(D, threshold=0.2)
    memory.add(names, vocab.vectors)
    scores, indices, matched = hrr.cleanup(memory, hrr.unbind(record.expand(3, D), roles))
    assert [memory.label(i) for i in indices.tolist()] == ["item3", "item7", "item11"]
    assert matched.all()


def test_permute_shifts_and_inverse_permute_undoes_it():
    v = torch.arange(6, dtype=torch.float32)
    assert hrr.permute(v, 2).tolist() == [4, 5, 0, 1, 2, 3]
    assert torch.equal(hrr.inverse_permute(hrr.permute(v, 2), 2), v)


def test_a_vocabulary_is_the_same_in_every_process_and_order():
    a = hrr.Vocabulary(D, seed=7)
    b = hrr.Vocabulary(D, seed=7)
    a.add(["x", "y"])
    b.add(["y", "x"])
    assert torch.equal(a.get("x"), b.get("x"))
    assert torch.equal(a.get("x"), hrr.named_vector(7, "x", D))
    assert not torch.equal(a.get("x"), hrr.Vocabulary(D, seed=8).get("x"))


def test_vocabulary_and_item_memory_are_torch_modules_with_their_vectors_as_buffers():
    vocab = hrr.Vocabulary(64, seed=1)
    vocab.add(["a", "b", "c"])
    assert isinstance(vocab, torch.nn.Module)
    buffers = dict(vocab.named_buffers())
    assert buffers["vectors"].shape == (3, 64)
    assert torch.equal(vocab.state_dict()["vectors"], vocab.vectors)


def test_saves_round_trip_and_a_tampered_save_is_refused(tmp_path):
    vocab = hrr.Vocabulary(64, seed=1, unitary=True)
    vocab.add(["a", "b"])
    path = tmp_path / "vocab.pt"
    hrr.save_vocabulary(vocab, path)
    loaded = hrr.load_vocabulary(path)
    assert loaded.names() == ["a", "b"] and torch.equal(loaded.vectors, vocab.vectors)
    assert isinstance(loaded, hrr.Vocabulary)
    memory = hrr.ItemMemory(64, threshold=0.5)
    memory.add(["a", "b"], vocab.vectors)
    hrr.save_item_memory(memory, tmp_path / "memory.pt")
    assert hrr.load_item_memory(tmp_path / "memory.pt").labels() == ["a", "b"]
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    (tmp_path / "bad.pt").write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match="bad.pt"):
        hrr.load_vocabulary(tmp_path / "bad.pt")


def test_bad_arguments_are_python_errors():
    with pytest.raises(ValueError):
        hrr.bind(torch.zeros(8), torch.zeros(9))
    with pytest.raises(ValueError):
        hrr.bind(torch.zeros(8, dtype=torch.int64), torch.zeros(8, dtype=torch.int64))
    with pytest.raises(TypeError):
        hrr.save_vocabulary(object(), "x.pt")


@cuda
def test_operations_run_on_cuda_where_the_tensors_are():
    a = hrr.random_unitary([16, D], seed=1, device="cuda")
    b = hrr.random([16, D], seed=2, device="cuda")
    c = hrr.bind(a, b)
    assert c.device.type == "cuda"
    assert torch.allclose(c.cpu(), hrr.bind(a.cpu(), b.cpu()), atol=1e-5)
