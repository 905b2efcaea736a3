#include "python/csrc/python_values.h"

#include <cmath>

#include <fmt/format.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/utils/tensor_numpy.h>

namespace fieldbrain::python {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    s += (i ? ", " : "") + (shape[i] < 0 ? std::string("any") : std::to_string(shape[i]));
  }
  return s + "]";
}

bool shape_matches(torch::IntArrayRef sizes, const std::vector<int64_t>& shape) {
  if (sizes.size() != shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] >= 0 && sizes[i] != shape[i]) return false;
  }
  return true;
}

// numpy.ndarray, looked up once (none when numpy is not installed).
PyObject* ndarray_type() {
  static PyObject* type = [] {
    try {
      return py::object(py::module::import("numpy").attr("ndarray")).release().ptr();
    } catch (const py::error_already_set&) {
      PyErr_Clear();
      return static_cast<PyObject*>(nullptr);
    }
  }();
  return type;
}

std::string type_name(py::handle value) { return py::type::of(value).attr("__name__").cast<std::string>(); }

}  // namespace

py::object to_python(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(j.get<uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(j.get<double>());
    case nlohmann::json::value_t::string:
      return py::str(j.get<std::string>());
    case nlohmann::json::value_t::array: {
      py::list out;
      for (const auto& v : j) out.append(to_python(v));
      return py::object(std::move(out));
    }
    case nlohmann::json::value_t::object: {
      py::dict out;
      for (const auto& [k, v] : j.items()) out[py::str(k)] = to_python(v);
      return py::object(std::move(out));
    }
    default:
      return py::none();
  }
}

nlohmann::json to_json_value(py::handle value, const std::string& what) {
  if (value.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) {
    try {
      return value.cast<int64_t>();
    } catch (const py::cast_error&) {
      return value.cast<uint64_t>();  // seeds above 2^63
    }
  }
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::isinstance<py::dict>(value)) {
    nlohmann::json out = nlohmann::json::object();
    for (auto item : value.cast<py::dict>()) {
      if (!py::isinstance<py::str>(item.first)) {
        throw py::type_error(fmt::format("{}: keys must be strings", what));
      }
      const auto key = item.first.cast<std::string>();
      out[key] = to_json_value(item.second, what + "." + key);
    }
    return out;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    nlohmann::json out = nlohmann::json::array();
    for (auto item : value) out.push_back(to_json_value(item, what));
    return out;
  }
  throw py::type_error(
      fmt::format("{} must be a number, a string or a bool, not {}", what, type_name(value)));
}

torch::Tensor float32_input(py::handle value, const char* what, const std::vector<int64_t>& shape,
                            const c10::Device& device) {
  torch::Tensor t;
  if (THPVariable_Check(value.ptr())) {
    t = THPVariable_Unpack(value.ptr());
  } else if (PyObject* nd = ndarray_type(); nd && PyObject_IsInstance(value.ptr(), nd) == 1) {
    t = torch::utils::tensor_from_numpy(value.ptr(), /*warn_if_not_writeable=*/false);
  } else {
    throw py::type_error(fmt::format(
        "{} must be a torch.Tensor or a numpy.ndarray of float32, not {}", what, type_name(value)));
  }
  if (t.scalar_type() != torch::kFloat32) {
    throw py::type_error(fmt::format("{} must be float32, not {} (convert it first: "
                                     ".float() / .astype(numpy.float32))",
                                     what, c10::toString(t.scalar_type())));
  }
  if (!t.device().is_cpu() && t.device() != device) {
    throw py::value_error(fmt::format("{} is on {}, this brain runs on {} (CPU input is taken too)",
                                      what, t.device().str(), device.str()));
  }
  if (!shape_matches(t.sizes(), shape)) {
    throw py::value_error(fmt::format("{} has shape {}, expected {}", what, c10::str(t.sizes()),
                                      shape_text(shape)));
  }
  return t;
}

float float_input(py::handle value, const char* what) {
  if (!py::isinstance<py::float_>(value) && !py::isinstance<py::int_>(value) &&
      !torch::utils::is_numpy_scalar(value.ptr())) {
    if (THPVariable_Check(value.ptr())) {
      const torch::Tensor& t = THPVariable_Unpack(value.ptr());
      if (t.numel() == 1 && t.is_floating_point()) return t.item<float>();
    }
    throw py::type_error(fmt::format("{} must be a number, not {}", what, type_name(value)));
  }
  const double v = PyFloat_AsDouble(value.ptr());
  if (v == -1.0 && PyErr_Occurred()) throw py::error_already_set();
  if (!std::isfinite(v)) throw py::value_error(fmt::format("{} is not finite ({})", what, v));
  return static_cast<float>(v);
}

std::string keyword_message(const std::string& message) {
  std::string out = message;
  const std::string prefix = "'brain.";
  for (size_t at = out.find(prefix); at != std::string::npos; at = out.find(prefix, at)) {
    out.replace(at, prefix.size(), "'");
  }
  return out;
}

}  // namespace fieldbrain::python
