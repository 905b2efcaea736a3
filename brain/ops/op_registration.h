// The registrations every fused operator gets from its declaration (brain/ops/op_entry.h):
// each device's kernel wrapper (DeviceKernel), the composite kernel of an allocating op and the
// helpers that register a whole op list (brain/ops/op_list.h). Included only by the
// registration files: register.cpp (schemas), cpu/register.cpp and cuda/register.cpp.
#pragma once

#include <torch/library.h>

#include <tuple>
#include <type_traits>
#include <utility>

#include "brain/ops/op_entry.h"

namespace fieldbrain {
namespace ops {

namespace detail {

template <class... A>
decltype(auto) first_of(A&&... args) {
  return std::get<0>(std::forward_as_tuple(std::forward<A>(args)...));
}
template <class... A>
decltype(auto) last_of(A&&... args) {
  return std::get<sizeof...(A) - 1>(std::forward_as_tuple(std::forward<A>(args)...));
}

// A prepare result that also keeps tensors alive (the copies of non-contiguous inputs) names
// its torch-free base as `Args`; the kernels take that base.
template <class T, class = void>
struct KernelArgsOf {
  using type = T;
};
template <class T>
struct KernelArgsOf<T, std::void_t<typename T::Args>> {
  using type = typename T::Args;
};

}  // namespace detail

// The kernel of `Op` on `Device` (a policy: kType, guard(first argument), launch(name, args)):
// guard -> Op::prepare -> the device's kernel for the prepared struct; an op returning
// Tensor(a!) returns its last argument (the out tensor).
template <class Op, class Device, class Sig = typename Op::Signature>
struct DeviceKernel;
template <class Op, class Device, class R, class... A>
struct DeviceKernel<Op, Device, R(A...)> {
  static R run(A... args) {
    [[maybe_unused]] const auto guard = Device::guard(detail::first_of(args...));
    const auto prepared = Op::prepare(Device::kType, args...);
    using KernelArgs = typename detail::KernelArgsOf<std::decay_t<decltype(prepared)>>::type;
    Device::launch(Op::kName, static_cast<const KernelArgs&>(prepared));
    if constexpr (!std::is_void_v<R>) return detail::last_of(args...);
  }
};

template <class... Ops>
struct OpList {};

// Defines every op of the list (its schema) in `m`.
template <class... Ops>
void define_ops(torch::Library& m, OpList<Ops...>) {
  (m.def(Ops::kSchema), ...);
}
template <class... Ops>
void define_allocating_ops(torch::Library& m, OpList<Ops...>) {
  (m.def(Ops::schema().c_str()), ...);
}

// Registers the kernel of every op of the list on `Device`.
template <class Device, class... Ops>
void register_kernels(torch::Library& m, OpList<Ops...>) {
  (m.impl(Ops::kName,
          c10::CompileTimeFunctionPointer<typename Ops::Signature,
                                          &DeviceKernel<Ops, Device>::run>()),
   ...);
}

// The composite kernel of an allocating op (every device at once, CompositeExplicitAutograd):
// one allocation, the result, then the _out op through the dispatcher.
template <class Op, class Sig = typename Op::Signature>
struct AllocatingKernel;
template <class Op, class... A>
struct AllocatingKernel<Op, at::Tensor(A...)> {
  static at::Tensor run(A... args) {
    at::Tensor out = Op::empty_result(detail::first_of(args...));
    return OpEntry<typename Op::Out>{}(args..., out);
  }
};

template <class... Ops>
void register_allocating_kernels(torch::Library& m, OpList<Ops...>) {
  (m.impl(Ops::kName,
          c10::CompileTimeFunctionPointer<typename Ops::Signature,
                                          &AllocatingKernel<Ops>::run>()),
   ...);
}

}  // namespace ops
}  // namespace fieldbrain
