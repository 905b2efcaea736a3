// Argument checks shared by the HRR functions: they turn bad shapes and dtypes into
// std::invalid_argument with a message naming the function, instead of a deep ATen error.
#pragma once

#include <torch/torch.h>

#include <string>

namespace fieldbrain::hrr {

// v is a defined float32/float64 tensor with at least one dim and a non-empty last dim.
void check_vectors(const torch::Tensor& v, const char* function, const char* name);

// a and b pass check_vectors and share dtype and last dim.
void check_pair(const torch::Tensor& a, const torch::Tensor& b, const char* function);

// Throws std::invalid_argument("<function>: <message>").
[[noreturn]] void fail(const char* function, const std::string& message);

}  // namespace fieldbrain::hrr
