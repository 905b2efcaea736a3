// What every fused operator gets from its one declaration (brain/ops/<family>.h, e.g.
// attractor_pull.h): a struct with
//   kName      the name in the fieldbrain namespace ("attractor_pull_")
//   kSchema    the schema string (what TorchScript and Python see)
//   Signature  the same arguments as C++ types (const at::Tensor& inputs, at::Tensor& outputs)
//   prepare    static XArgs prepare(c10::DeviceType, <Signature's arguments>): checks every
//              argument for a kernel of that device (c10::Error naming it) and returns the
//              torch-free struct of raw pointers and sizes that the kernels take.
// From it, the templates below make the C++ entry point (OpEntry) and the signature of an
// _out op's allocating variant (Allocating); op_registration.h makes each device's kernel
// wrapper and the registrations (register.cpp, cpu/register.cpp, cuda/register.cpp).
// How to change a signature: brain/FUSED.md ("Changing an operator's signature").
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace fieldbrain {
namespace ops {

// The dispatcher's handle of `Op`, looked up once.
template <class Op>
const c10::TypedOperatorHandle<typename Op::Signature>& op_handle() {
  static const auto handle =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow((std::string("fieldbrain::") + Op::kName).c_str(), "")
          .template typed<typename Op::Signature>();
  return handle;
}

// The C++ entry point of `Op`: ops::attractor_pull_(field, bank, weights, workspace) calls the
// op through the dispatcher (any device with a kernel), taking exactly Signature's parameters.
template <class Op, class Sig = typename Op::Signature>
class OpEntry;
template <class Op, class R, class... A>
class OpEntry<Op, R(A...)> {
 public:
  R operator()(A... args) const { return op_handle<Op>().call(args...); }
};

// ---- Allocating variants of _out ops ----------------------------------------------------

namespace detail {
template <class Sig>
struct WithoutOut;
template <class... A>
struct WithoutOut<at::Tensor&(A...)> {
  template <std::size_t... I>
  static auto pick(std::index_sequence<I...>)
      -> at::Tensor (*)(std::tuple_element_t<I, std::tuple<A...>>...);
  using type = std::remove_pointer_t<decltype(pick(std::make_index_sequence<sizeof...(A) - 1>{}))>;
};
}  // namespace detail

// "x_out(<args>, Tensor(a!) out) -> Tensor(a!)" -> "x(<args>) -> Tensor"; throws if the _out
// schema is not of that form.
std::string allocating_schema(const char* out_schema);

// An allocating op `x` over `Out` = x_out: its schema and Signature are Out's without the out
// argument. The declaring struct adds kName and
//   static at::Tensor empty_result(const at::Tensor& first_argument)
// which allocates the result (the _out kernel then checks everything and fills it).
template <class OutOp>
struct Allocating {
  using Out = OutOp;
  using Signature = typename detail::WithoutOut<typename OutOp::Signature>::type;
  static std::string schema() { return allocating_schema(OutOp::kSchema); }
};

}  // namespace ops
}  // namespace fieldbrain
