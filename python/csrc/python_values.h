// Python values in and out of the extension: JSON (configs, telemetry) as Python dicts, and
// the tensors a caller hands the brain, checked so that a wrong argument is a Python exception
// saying what was wrong (TypeError: not a tensor/array, not float32; ValueError: the shape, the
// device) and never a silent conversion.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/extension.h>

namespace fieldbrain::python {

namespace py = pybind11;

// JSON object/array/scalar -> dict/list/int/float/str/bool/None.
py::object to_python(const nlohmann::json& j);
// A Python value (dict with str keys, list/tuple, int, float, str, bool, None) -> JSON. Raises
// TypeError naming `what` for anything else.
nlohmann::json to_json_value(py::handle value, const std::string& what);

// A torch.Tensor or numpy.ndarray as a tensor without copying (numpy: torch.from_numpy's view).
// Raises TypeError for any other type and for a dtype other than float32 (`what` names the
// argument); ValueError for a tensor on another device than `device` or the CPU, and when its
// shape is not `shape` (one entry may be -1: any size, reported as such).
torch::Tensor float32_input(py::handle value, const char* what, const std::vector<int64_t>& shape,
                            const c10::Device& device);

// A float from a Python number (TypeError otherwise; None is not a number here).
float float_input(py::handle value, const char* what);

// The BrainConfig parser's messages name keys as 'brain.<key>' (the config file's object); from
// Python the key is a keyword argument: the message with that prefix dropped.
std::string keyword_message(const std::string& message);

}  // namespace fieldbrain::python
