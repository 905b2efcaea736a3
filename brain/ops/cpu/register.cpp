// CPU registration of every fused operator with a per-device kernel (brain/ops/op_list.h): the
// wrapper of each op (checks via its prepare, then cpu::run) comes from op_registration.h.
#include <torch/library.h>

#include "brain/ops/cpu/kernels.h"
#include "brain/ops/op_list.h"

namespace fieldbrain {
namespace ops {
namespace cpu {

struct CpuDevice {
  static constexpr c10::DeviceType kType = c10::DeviceType::CPU;
  static int guard(const at::Tensor&) { return 0; }  // no device to select
  template <class Args>
  static void launch(const char*, const Args& args) {
    run(args);
  }
};

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain

TORCH_LIBRARY_IMPL(fieldbrain, CPU, m) {
  using namespace fieldbrain::ops;
  register_kernels<cpu::CpuDevice>(m, KernelOps{});
}
