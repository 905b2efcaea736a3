#include "brain/legacy/legacy_views.h"

#include "brain/legacy/legacy_cycle.h"

namespace fieldbrain::legacy {

std::shared_ptr<torch::nn::Module> legacy_module_tree(const LegacyBrainImpl& brain) {
  auto tree = std::make_shared<torch::nn::Module>("LegacyBrain");
  const LegacyCycle& cycle = brain.cycle_state();
  tree->register_buffer("field", brain.field());
  tree->register_module("field_dynamics", cycle.dynamics().ptr());
  tree->register_module("hierarchy", cycle.predictive().hierarchy().ptr());
  return tree;
}

StateWriter legacy_saved_state(const LegacyBrainImpl& brain) {
  StateWriter w;
  brain.cycle_state().save(w);
  return w;
}

}  // namespace fieldbrain::legacy
