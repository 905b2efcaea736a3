// The CUDA launchers of the fused operators, one overload per op: each takes the torch-free
// struct its op's prepare returns (brain/ops/op_entry.h), enqueues its kernels on `stream` (a
// cudaStream_t) and returns 0 or the first failing launch's cudaError_t. Plain C++ (no LibTorch,
// no CUDA headers): the cuda/<family>_kernel.cu files define them with nvcc alone, and
// cuda/register.cpp (FIELDBRAIN_CUDA=ON) is the one torch-facing caller.
#pragma once

#include <cstddef>
#include <cstdint>

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
namespace cuda {

// bank[b, slot[b]] = field[b] for every robot whose slot is >= 0 (and < slots).
int launch(const AttractorRecordArgs& args, void* stream);
// field += the pull of every slot with a non-zero weight; the workspace is overwritten.
int launch(const AttractorPullArgs& args, void* stream);
// The field step; args.workspace holds field_step_workspace_floats(B, R) floats.
int launch(const FieldStepArrays& args, void* stream);
size_t field_step_workspace_floats(int64_t batch, int64_t resolution);
int launch(const FieldReadoutArgs& args, void* stream);
int launch(const HierarchyObserveArgs& args, void* stream);
int launch(const HierarchyApplyArgs& args, void* stream);
int launch(const ErrorFieldArgs& args, void* stream);
int launch(const modulation::ModulationArrays& args, void* stream);
int launch(const PhiloxNormalArgs& args, void* stream);
int launch(const prediction::ScoreArgs& args, void* stream);
int launch(const prediction::ActArgs& args, void* stream);
int launch(const ImprintArrays& args, void* stream);
int launch(const SpontaneousWaveArgs& args, void* stream);

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
