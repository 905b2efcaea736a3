#include "brain/ops/arg_check.h"

#include <c10/util/Exception.h>

namespace fieldbrain {
namespace ops {
namespace {

// The argument's name as the error shows it (built only when a check fails).
std::string arg_name(const char* name, int64_t index) {
  return index < 0 ? std::string(name) : c10::str(name, "[", index, "]");
}

bool shape_matches(at::IntArrayRef sizes, at::IntArrayRef shape) {
  if (sizes.size() != shape.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != kAnySize && sizes[d] != shape[d]) return false;
  }
  return true;
}

bool layout_ok(const at::Tensor& t, ArgLayout layout) {
  switch (layout) {
    case ArgLayout::kContiguous:
      return t.is_contiguous();
    case ArgLayout::kRows:
      // A row of a [B] tensor is one element: any stride.
      return t.dim() < 2 || t.stride(t.dim() - 1) == 1 || t.size(t.dim() - 1) == 1;
    case ArgLayout::kStrided:
      return true;
  }
  return false;
}

const char* layout_demand(ArgLayout layout) {
  return layout == ArgLayout::kRows ? "'s rows must be contiguous (no copy is made)"
                                    : " must be contiguous (no copy is made)";
}

}  // namespace

const char* dtype_name(at::ScalarType type) {
  switch (type) {
    case at::kFloat: return "float32";
    case at::kDouble: return "float64";
    case at::kLong: return "int64";
    case at::kInt: return "int32";
    case at::kBool: return "bool";
    default: return c10::toString(type);
  }
}

std::string shape_text(at::IntArrayRef shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d > 0) s += ",";
    s += shape[d] == kAnySize ? std::string("*") : std::to_string(shape[d]);
  }
  return s + "]";
}

void ArgCheck::operator()(const char* name, const at::Tensor& t, at::IntArrayRef shape,
                          at::ScalarType dtype, ArgLayout layout, const char* form) {
  check(name, -1, t, shape, dtype, layout, form);
}

void ArgCheck::element(const char* name, int64_t index, const at::Tensor& t,
                       at::IntArrayRef shape, at::ScalarType dtype, ArgLayout layout) {
  check(name, index, t, shape, dtype, layout, nullptr);
}

void ArgCheck::dims(const char* name, const at::Tensor& t, int64_t dim, const char* form) {
  TORCH_CHECK(t.defined() && t.dim() == dim, op_, ": ", name, " must have shape ", form, ", got ",
              t.defined() ? shape_text(t.sizes()) : std::string("undefined"));
}

void ArgCheck::check(const char* name, int64_t index, const at::Tensor& t, at::IntArrayRef shape,
                     at::ScalarType dtype, ArgLayout layout, const char* form) {
  TORCH_CHECK(t.defined(), op_, ": ", arg_name(name, index), " is undefined");
  TORCH_CHECK(t.scalar_type() == dtype, op_, ": ", arg_name(name, index), " must be ",
              dtype_name(dtype), ", got ", dtype_name(t.scalar_type()));
  TORCH_CHECK(shape_matches(t.sizes(), shape), op_, ": ", arg_name(name, index),
              " must have shape ", form ? c10::str(form, " = ") : std::string(),
              shape_text(shape), ", got ", shape_text(t.sizes()));
  TORCH_CHECK(t.device().type() == device_, op_, ": ", arg_name(name, index), " must be on ",
              c10::DeviceTypeName(device_), " for this kernel, got ", t.device());
  if (!first_device_) first_device_ = t.device();
  TORCH_CHECK(t.device() == *first_device_, op_, ": ", arg_name(name, index),
              " must be on the same device as the other arguments (", *first_device_, "), got ",
              t.device());
  TORCH_CHECK(layout_ok(t, layout), op_, ": ", arg_name(name, index), layout_demand(layout),
              layout == ArgLayout::kRows ? c10::str(", got strides ", t.strides()) : std::string());
}

}  // namespace ops
}  // namespace fieldbrain
