"""Holographic reduced representations on torch tensors (fieldbrain's hrr/ library).

Vectors are tensors [..., D], float32 or float64, on the CPU or CUDA; every function runs where
its inputs are and broadcasts leading (batch) dims like torch's elementwise ops. Conventions
(docs/hrr.md): bind = circular convolution; `inverse` is the involution a[-i mod D] (exact for
unitary vectors, approximate for Gaussian ones); `exact_inverse` is the regularised one.
"""

from torch.nn.cpp import ModuleWrapper

from . import _C
from ._modules import adopt

_hrr = _C.hrr

bind = _hrr.bind
unbind = _hrr.unbind
inverse = _hrr.inverse
involution = _hrr.involution
exact_inverse = _hrr.exact_inverse
make_unitary = _hrr.make_unitary
identity = _hrr.identity
bundle = _hrr.bundle
permute = _hrr.permute
inverse_permute = _hrr.inverse_permute
permute_by = _hrr.permute_by
inverse_permute_by = _hrr.inverse_permute_by
power = _hrr.power
normalize = _hrr.normalize
dot = _hrr.dot
cosine = _hrr.cosine
cosine_matrix = _hrr.cosine_matrix
random = _hrr.random
random_unitary = _hrr.random_unitary
random_permutation = _hrr.random_permutation
named_vector = _hrr.named_vector


class Vocabulary(_hrr.Vocabulary):
    """Named symbols: vectors derived from (seed, name), identical in every process.

    A torch.nn.Module: its buffer "vectors" [N, D] is in named_buffers() and state_dict()."""

    def __init__(self, dim, *, seed=0, unitary=False, dtype=None):
        super().__init__(dim, seed=seed, unitary=unitary, dtype=dtype)
        adopt(self)


class ItemMemory(_hrr.ItemMemory):
    """Clean-up memory: labelled vectors queried in batches (one matmul + top-k).

    query(q, k) and cleanup(q) return (scores, indices, matched); cleanup's index is -1 where
    the best score is below the threshold."""

    def __init__(self, dim, *, similarity="cosine", threshold=float("-inf"), dtype=None):
        super().__init__(dim, similarity=similarity, threshold=threshold, dtype=dtype)
        adopt(self)


def cleanup(memory, queries):
    """The best item of `memory` for each query: (scores, indices, matched), indices -1 below
    the memory's threshold."""
    return memory.cleanup(queries)


def _cpp(module, kind):
    if isinstance(module, ModuleWrapper):
        module = module.cpp_module
    if not isinstance(module, kind):
        raise TypeError(f"expected a fieldbrain.hrr.{kind.__name__}, not {type(module).__name__}")
    return module


def _wrapped(cls, cpp):
    module = cls.__new__(cls)
    ModuleWrapper.__init__(module, cpp)
    return adopt(module)


def save_vocabulary(vocabulary, path):
    """Atomic, SHA-256-checked save; torch.load(path, weights_only=True) opens it."""
    _hrr.save_vocabulary(_cpp(vocabulary, _hrr.cpp.Vocabulary), str(path))


def load_vocabulary(path):
    """Loads and verifies a save (RuntimeError naming the file and the problem otherwise)."""
    return _wrapped(Vocabulary, _hrr.load_vocabulary(str(path)))


def save_item_memory(memory, path):
    _hrr.save_item_memory(_cpp(memory, _hrr.cpp.ItemMemory), str(path))


def load_item_memory(path):
    return _wrapped(ItemMemory, _hrr.load_item_memory(str(path)))
