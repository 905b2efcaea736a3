#include "hrr/tensor_checks.h"

#include <stdexcept>

namespace fieldbrain::hrr {

void fail(const char* function, const std::string& message) {
  throw std::invalid_argument(std::string(function) + ": " + message);
}

void check_vectors(const torch::Tensor& v, const char* function, const char* name) {
  if (!v.defined()) fail(function, std::string(name) + " is an undefined tensor");
  if (v.dim() < 1) fail(function, std::string(name) + " must have a last dim D (got a scalar)");
  if (v.size(-1) < 1) fail(function, std::string(name) + " has an empty last dim");
  if (v.scalar_type() != torch::kFloat32 && v.scalar_type() != torch::kFloat64) {
    fail(function, std::string(name) + " must be float32 or float64, got " +
                       std::string(c10::toString(v.scalar_type())));
  }
}

void check_pair(const torch::Tensor& a, const torch::Tensor& b, const char* function) {
  check_vectors(a, function, "first operand");
  check_vectors(b, function, "second operand");
  if (a.size(-1) != b.size(-1)) {
    fail(function, "dimension mismatch: D = " + std::to_string(a.size(-1)) + " vs " +
                       std::to_string(b.size(-1)));
  }
  if (a.scalar_type() != b.scalar_type()) {
    fail(function, std::string("dtype mismatch: ") + c10::toString(a.scalar_type()) + " vs " +
                       c10::toString(b.scalar_type()));
  }
  if (a.device() != b.device()) {
    fail(function, "device mismatch: " + a.device().str() + " vs " + b.device().str());
  }
}

}  // namespace fieldbrain::hrr
