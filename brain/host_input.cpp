#include "brain/host_input.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "brain/sync_counter.h"

namespace fieldbrain {

torch::Tensor host_input(const char* caller, const torch::Tensor& t, const char* name,
                         const std::vector<int64_t>& shape) {
  std::string want = "[";
  for (size_t i = 0; i < shape.size(); ++i) want += (i ? "," : "") + std::to_string(shape[i]);
  want += "]";
  if (!t.defined()) throw std::invalid_argument(fmt::format("{}: {} is undefined", caller, name));
  if (t.sizes() != torch::IntArrayRef(shape)) {
    throw std::invalid_argument(fmt::format("{}: {} has shape {}, expected {}", caller, name,
                                            c10::str(t.sizes()), want));
  }
  if (!t.is_floating_point()) {
    throw std::invalid_argument(fmt::format("{}: {} has dtype {}, expected float32",
                                            caller, name, c10::toString(t.scalar_type())));
  }
  torch::Tensor h = t.device().is_cpu() ? t : SyncCounter::to_host(t);
  h = h.to(torch::kFloat).contiguous();
  const float* p = h.data_ptr<float>();
  auto where = [&](int64_t i) {
    const int64_t cols = shape.size() == 2 ? shape[1] : 1;
    return shape.size() == 2 ? fmt::format("[{}][{}]", i / cols, i % cols) : fmt::format("[{}]", i);
  };
  for (int64_t i = 0; i < h.numel(); ++i) {
    if (!std::isfinite(p[i])) {
      throw std::invalid_argument(
          fmt::format("{}: {}{} is not finite ({})", caller, name, where(i), p[i]));
    }
    if (std::fabs(p[i]) > kMaxInputMagnitude) {
      throw std::invalid_argument(fmt::format("{}: {}{} = {} is outside [-{:g}, {:g}]", caller,
                                              name, where(i), p[i], kMaxInputMagnitude,
                                              kMaxInputMagnitude));
    }
  }
  return h;
}

}  // namespace fieldbrain
