// fieldbrain._C: the extension module behind `import fieldbrain` (python/fieldbrain/__init__.py
// imports torch first, so LibTorch and torch's pybind11 types are loaded before this module).
//
// The fused operators are not registered here: they live in libfieldbrain_ops.so, which this
// module links (and the package carries next to it), so loading _C runs their TORCH_LIBRARY
// registration once and torch.ops.fieldbrain.* is then visible.
#include <torch/extension.h>

#include "python/csrc/bindings.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "fieldbrain's C++ brain, HRR library and operators (see docs/python.md)";
  fieldbrain::python::bind_brain(m);
  pybind11::module_ hrr = m.def_submodule("hrr", "fieldbrain's HRR library (hrr/)");
  fieldbrain::python::bind_hrr(hrr);
}
