// The CPU kernels of the fused operators, one overload per op: each takes the torch-free
// struct its op's prepare returns (brain/ops/op_entry.h) and runs on the calling thread with
// at::parallel_for. Defined in cpu/<family>_kernel.cpp, registered by cpu/register.cpp.
#pragma once

#include "brain/ops/attractor_math.h"
#include "brain/ops/field_readout_layout.h"
#include "brain/ops/field_step_arrays.h"
#include "brain/ops/hierarchy_learn_math.h"
#include "brain/ops/novelty_modulation_math.h"
#include "brain/ops/philox.h"
#include "brain/ops/prediction_math.h"
#include "brain/ops/sensory_imprint_arrays.h"
#include "brain/ops/spontaneous_wave_math.h"

namespace fieldbrain {
namespace ops {
namespace cpu {

void run(const AttractorRecordArgs& args);
void run(const AttractorPullArgs& args);
void run(const FieldStepArrays& args);  // args.workspace is not used
void run(const FieldReadoutArgs& args);
void run(const HierarchyObserveArgs& args);
void run(const HierarchyApplyArgs& args);
void run(const ErrorFieldArgs& args);
void run(const modulation::ModulationArrays& args);
void run(const PhiloxNormalArgs& args);
void run(const prediction::ScoreArgs& args);
void run(const prediction::ActArgs& args);
void run(const ImprintArrays& args);
void run(const SpontaneousWaveArgs& args);

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
