// The schemas of every fused operator (brain/ops/op_list.h) and the composite kernels of the
// allocating variants, registered once for every device; the device kernels are registered by
// cpu/register.cpp and cuda/register.cpp.
#include <torch/library.h>

#include <string>

#include "brain/ops/op_list.h"

namespace fieldbrain {
namespace ops {

std::string allocating_schema(const char* out_schema) {
  std::string s = out_schema;
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    TORCH_CHECK(at != std::string::npos, "fieldbrain: the _out schema '", out_schema,
                "' lacks '", from, "'");
    s.replace(at, from.size(), to);
  };
  replace("_out(", "(");
  replace(", Tensor(a!) out)", ")");
  replace("-> Tensor(a!)", "-> Tensor");
  return s;
}

}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY(fieldbrain, m) {
  fieldbrain::ops::define_ops(m, fieldbrain::ops::KernelOps{});
  fieldbrain::ops::define_allocating_ops(m, fieldbrain::ops::AllocatingOps{});
  // Which instruction-set variant the CPU kernels run (for benchmarks and tests).
  m.def("field_step_cpu_isa() -> str", [] { return fieldbrain::ops::field_step_cpu_isa(); });
  m.def("field_readout_cpu_isa() -> str", [] { return fieldbrain::ops::field_readout_cpu_isa(); });
}

TORCH_LIBRARY_IMPL(fieldbrain, CompositeExplicitAutograd, m) {
  fieldbrain::ops::register_allocating_kernels(m, fieldbrain::ops::AllocatingOps{});
}
