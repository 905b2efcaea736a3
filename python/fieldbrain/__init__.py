"""fieldbrain from Python: the brain (both profiles), its modules, HRR and the fused operators.

    import fieldbrain
    brain = fieldbrain.Brain(resolution=8, sensors=4, motors=2, seed=7)
    motors = brain.step(torch.zeros(4))          # torch.float32 [2]

See docs/python.md. `import torch` comes first: the extension links this LibTorch and torch's
Python bindings, which must be loaded before it.
"""

import torch  # noqa: F401  (must precede ._C)

from . import _C
from ._C import Brain, BrainGroup
from . import hrr

__all__ = ["Brain", "BrainGroup", "hrr", "em_brain", "ops"]

# The C++ modules' torch.nn.Module classes (torch::python::bind_module) are named as ours.
for _cls in (_C.FieldBrainModule, _C.BrainGroupModule, _C.LegacyBrainModule):
    _cls.__module__ = __name__
del _cls

# The fused operators (torch.ops.fieldbrain.*), registered when _C loaded libfieldbrain_ops.so.
ops = torch.ops.fieldbrain


def __getattr__(name):
    # em_brain (the em-brain compatible adapter) is imported on first use.
    if name == "em_brain":
        from . import em_brain
        return em_brain
    raise AttributeError(f"module 'fieldbrain' has no attribute {name!r}")
