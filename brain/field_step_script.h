// The field step as a TorchScript module (models/README.md, docs/cycle.md step 7).
//
// Contract of every scripted step (built-in, exported to models/field_step.pt, or a user's):
//   forward(self, field: Tensor, noise: Tensor, wave: Tensor, ef: Tensor, scalars: Tensor) -> Tensor
// with the shapes and meaning of fieldbrain::field_step_reference (brain/field_dynamics.h,
// brain/INTERFACE.md). The built-in and the exported module call the fused operator
// fieldbrain::field_step, so the operator library (libfieldbrain_ops.so) must be loaded;
// a user's module may use any ops that are registered.
#pragma once

#include <string>

#include <torch/script.h>

namespace fieldbrain {

class ScriptedFieldStep {
 public:
  // models/field_step.pt (what scripts/export_field_step.py exports), compiled into the
  // library and loaded with torch::jit::load.
  static ScriptedFieldStep builtin();

  // Loads a TorchScript file and checks its forward signature. Throws std::invalid_argument
  // naming the path and the problem (missing file, not TorchScript, an operator that is not
  // registered, no forward, wrong argument count/types, wrong return type).
  static ScriptedFieldStep load(const std::string& path);

  torch::Tensor operator()(const torch::Tensor& field, const torch::Tensor& noise,
                           const torch::Tensor& wave, const torch::Tensor& ef,
                           const torch::Tensor& scalars);

  // "builtin" or the path it was loaded from.
  const std::string& origin() const { return origin_; }

 private:
  ScriptedFieldStep(torch::jit::Module module, std::string origin);
  torch::jit::Module module_;
  std::string origin_;
};

}  // namespace fieldbrain
