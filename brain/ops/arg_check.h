// What every fused operator demands of a tensor argument before its kernel runs, checked in one
// place: the tensor is defined, of its dtype and exact shape, on the kernel's device type and on
// the same device as the first argument checked, and laid out so that the kernel may use its
// raw pointer (the operators never copy an argument). A failed check throws c10::Error naming
// the operator, the argument and what was wrong:
//   fieldbrain::prediction_act: pred must have shape [B,S] = [2,5], got [2,4]
// Shapes are braced lists viewed as IntArrayRef, so a passing check allocates nothing (the
// checks run every cycle on the fused path).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Optional.h>

#include <string>

namespace fieldbrain {
namespace ops {

// A shape entry that matches any size (a width checked separately, e.g. the fact table's).
constexpr int64_t kAnySize = -1;

enum class ArgLayout {
  kContiguous,  // dense: the kernel reads it through one raw pointer
  kRows,        // each row dense, rows at any stride (a view of some columns of a wider table;
                // a [B] tensor's rows are single elements, so it may be any column of one)
  kStrided,     // any strides: the operator copies it or indexes it by strides itself
};

// dtype names as users and Python write them (float32, int64), not ATen's (Float, Long).
const char* dtype_name(at::ScalarType type);
// "[2,5]", with "*" for kAnySize: the form the operators' documentation uses.
std::string shape_text(at::IntArrayRef shape);

class ArgCheck {
 public:
  // `op` is the full name ("fieldbrain::field_step"); `device` the kernel's device type.
  ArgCheck(const char* op, c10::DeviceType device) : op_(op), device_(device) {}

  // Checks `t` against dtype, shape, device and layout. `form` names the shape in the
  // documentation's letters ("[B,S]") and is printed before the expected sizes when given.
  void operator()(const char* name, const at::Tensor& t, at::IntArrayRef shape,
                  at::ScalarType dtype = at::kFloat, ArgLayout layout = ArgLayout::kContiguous,
                  const char* form = nullptr);
  // The same for element `index` of a tensor list argument (named "name[index]").
  void element(const char* name, int64_t index, const at::Tensor& t, at::IntArrayRef shape,
               at::ScalarType dtype = at::kFloat, ArgLayout layout = ArgLayout::kContiguous);
  // Before sizes are read from `t`: it is defined and has `dim` dimensions, else
  // "<name> must have shape <form>, got ...".
  void dims(const char* name, const at::Tensor& t, int64_t dim, const char* form);

  const char* op() const { return op_; }

 private:
  void check(const char* name, int64_t index, const at::Tensor& t, at::IntArrayRef shape,
             at::ScalarType dtype, ArgLayout layout, const char* form);

  const char* op_;
  c10::DeviceType device_;
  c10::optional<at::Device> first_device_;
};

}  // namespace ops
}  // namespace fieldbrain
