#include "brain/field_step_script.h"

#include <fstream>
#include <stdexcept>
#include <utility>

#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/csrc/jit/frontend/sugared_value.h>

namespace fieldbrain {
namespace {

// `ops.<namespace>` in TorchScript source: the namespace of registered custom operators, so
// that ops.fieldbrain.field_step names the dispatcher's fieldbrain::field_step.
struct OpsNamespaces : torch::jit::SugaredValue {
  std::string kind() const override { return "custom operator namespaces"; }
  std::shared_ptr<torch::jit::SugaredValue> attr(const torch::jit::SourceRange& loc,
                                                 torch::jit::GraphFunction& m,
                                                 const std::string& field) override {
    return std::make_shared<torch::jit::BuiltinModule>(field);
  }
};

// Resolves "ops" as TorchScript's own importer does for serialised code; the default
// resolver only knows "torch" (= aten).
struct OpsResolver : torch::jit::Resolver {
  std::shared_ptr<torch::jit::SugaredValue> resolveValue(const std::string& name,
                                                         torch::jit::GraphFunction& m,
                                                         const torch::jit::SourceRange& loc) override {
    if (name == "ops") return std::make_shared<OpsNamespaces>();
    if (name == "torch") return std::make_shared<torch::jit::BuiltinModule>("aten");
    return nullptr;
  }
};

constexpr const char* kArgNames[] = {"field", "noise", "wave", "ef", "scalars"};

// Refuses a module whose forward does not match the contract, naming what differs.
void check_signature(const torch::jit::Module& module, const std::string& origin) {
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("field step '" + origin + "': " + why +
                                "; expected forward(self, field: Tensor, noise: Tensor, "
                                "wave: Tensor, ef: Tensor, scalars: Tensor) -> Tensor");
  };
  auto method = module.find_method("forward");
  if (!method) fail("the module has no forward method");
  const c10::FunctionSchema& schema = method->function().getSchema();
  const auto& args = schema.arguments();  // args[0] is self
  if (args.size() != 6)
    fail("forward takes " + std::to_string(args.size() - 1) + " arguments, not 5");
  for (size_t i = 1; i < args.size(); ++i) {
    if (!args[i].type()->isSubtypeOf(*c10::TensorType::get()))
      fail("argument " + std::to_string(i) + " ('" + args[i].name() + "', for " +
           kArgNames[i - 1] + ") is " + args[i].type()->str() + ", not Tensor");
  }
  const auto& rets = schema.returns();
  if (rets.size() != 1 || !rets[0].type()->isSubtypeOf(*c10::TensorType::get()))
    fail("forward returns " + (rets.empty() ? std::string("nothing") : rets[0].type()->str()) +
         ", not Tensor");
}

}  // namespace

const std::string& builtin_field_step_source() {
  static const std::string source = R"JIT(
def forward(self, field: Tensor, noise: Tensor, wave: Tensor, ef: Tensor, scalars: Tensor) -> Tensor:
    return ops.fieldbrain.field_step(field, noise, wave, ef, scalars)
)JIT";
  return source;
}

ScriptedFieldStep::ScriptedFieldStep(torch::jit::Module module, std::string origin)
    : module_(std::move(module)), origin_(std::move(origin)) {}

ScriptedFieldStep ScriptedFieldStep::builtin() {
  torch::jit::Module module("FieldStep");
  try {
    module.define(builtin_field_step_source(), std::make_shared<OpsResolver>());
  } catch (const c10::Error& e) {
    throw std::invalid_argument(
        std::string("built-in field step: cannot compile (is libfieldbrain_ops.so loaded?): ") +
        e.what_without_backtrace());
  }
  check_signature(module, "builtin");
  return ScriptedFieldStep(std::move(module), "builtin");
}

ScriptedFieldStep ScriptedFieldStep::load(const std::string& path) {
  if (!std::ifstream(path).good())
    throw std::invalid_argument("field step '" + path + "': cannot open the file");
  torch::jit::Module module;
  try {
    module = torch::jit::load(path);
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    what = what.substr(0, what.find('\n'));
    throw std::invalid_argument("field step '" + path +
                                "': not a loadable TorchScript module (" + what +
                                "); a step that calls fieldbrain ops needs libfieldbrain_ops.so");
  }
  check_signature(module, path);
  return ScriptedFieldStep(std::move(module), path);
}

torch::Tensor ScriptedFieldStep::operator()(const torch::Tensor& field, const torch::Tensor& noise,
                                            const torch::Tensor& wave, const torch::Tensor& ef,
                                            const torch::Tensor& scalars) {
  return module_.forward({field, noise, wave, ef, scalars}).toTensor();
}

}  // namespace fieldbrain
