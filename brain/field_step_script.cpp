#include "brain/field_step_script.h"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace fieldbrain {

// models/field_step.pt, compiled into the library (cmake/EmbedFile.cmake).
extern const unsigned char field_step_module[];
extern const std::size_t field_step_module_size;

namespace {

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

ScriptedFieldStep::ScriptedFieldStep(torch::jit::Module module, std::string origin)
    : module_(std::move(module)), origin_(std::move(origin)) {}

ScriptedFieldStep ScriptedFieldStep::builtin() {
  std::istringstream bytes(std::string(reinterpret_cast<const char*>(field_step_module),
                                       field_step_module_size));
  torch::jit::Module module;
  try {
    module = torch::jit::load(bytes);
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    throw std::invalid_argument(
        "built-in field step: cannot load (is libfieldbrain_ops.so loaded?): " +
        what.substr(0, what.find('\n')));
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
