// Read-only views of a LegacyBrain for tools outside brain/legacy/ (the Python package's module
// view and its part-by-part parity views, docs/python.md): the brain keeps its parts in the
// ported cycle (legacy_cycle.h), so these reach them here instead of each tool including the
// cycle. Reached through the entry header, brain/legacy/legacy_profile.h.
#pragma once

#include <torch/torch.h>

#include <memory>

#include "brain/legacy/legacy_brain.h"
#include "brain/legacy/legacy_state_io.h"

namespace fieldbrain::legacy {

// The brain's state as a module tree (LegacyBrainImpl keeps its parts in the ported cycle, not
// as registered submodules): buffer "field" [R,R,R,64] and the parts that are torch modules
// ("field_dynamics", "hierarchy"), sharing their tensors. Built on each call: the cycle swaps
// its field buffers, so a tree describes the state when it was made.
std::shared_ptr<torch::nn::Module> legacy_module_tree(const LegacyBrainImpl& brain);

// The cycle's whole state as the brain's save writes it (tensors copied): the caller takes it
// between cycles.
StateWriter legacy_saved_state(const LegacyBrainImpl& brain);

}  // namespace fieldbrain::legacy
