// The parts of the extension module fieldbrain._C, each bound in its own file.
#pragma once

#include <torch/extension.h>

namespace fieldbrain::python {

namespace py = pybind11;

void bind_brain(py::module& m);  // Brain, BrainGroup, the brain's modules (brain_bindings.cpp)
void bind_hrr(py::module& m);    // fieldbrain._C.hrr (hrr_bindings.cpp)

}  // namespace fieldbrain::python
