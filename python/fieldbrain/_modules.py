"""C++ torch::nn::Modules as Python torch.nn.Modules.

torch::python::bind_module gives each bound C++ module class a torch.nn.cpp.ModuleWrapper
subclass (fieldbrain._C.FieldBrainModule, fieldbrain.hrr.Vocabulary, ...). A ModuleWrapper
delegates to the C++ module but copies its C++ methods over torch.nn.Module's (named_buffers
returns a C++ dict, children are bare C++ objects), so state_dict() and recursion break on
submodules. `adopt` makes it a plain torch.nn.Module tree: each submodule wrapped too, and
torch.nn.Module's own named_buffers / state_dict / modules / ... reading them. The tensors are
the C++ state itself, not copies.
"""

from collections import OrderedDict

import torch
from torch.nn.cpp import ModuleWrapper

# torch.nn.Module methods that ModuleWrapper replaces with the C++ module's.
_NN_METHODS = ("parameters", "named_parameters", "buffers", "named_buffers", "children",
               "named_children", "modules", "named_modules", "to", "cuda", "cpu", "float",
               "double", "half", "train", "eval", "zero_grad")


def adopt(wrapper):
    """Make a ModuleWrapper behave as a torch.nn.Module tree (in place); returns it."""
    for name in _NN_METHODS:
        wrapper.__dict__.pop(name, None)
    children = OrderedDict()
    for name, child in wrapper.cpp_module._modules.items():
        children[name] = wrap(child)
    object.__setattr__(wrapper, "_modules", children)
    return wrapper


def wrap(cpp_module):
    """The torch.nn.Module for a C++ module object (a fieldbrain._C.cpp.* or torch's own)."""
    from . import _C
    cls = getattr(_C, type(cpp_module).__name__, None)
    if cls is None:
        cls = getattr(_C.hrr, type(cpp_module).__name__, None)
    if not (isinstance(cls, type) and issubclass(cls, ModuleWrapper)):
        cls = ModuleWrapper
    module = cls.__new__(cls)
    ModuleWrapper.__init__(module, cpp_module)
    return adopt(module)
