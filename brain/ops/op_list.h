// Every fused operator of libfieldbrain_ops, by its declaration (brain/ops/op_entry.h). The
// registration files define and register these lists; an op is added by declaring it in its
// family header and naming it here.
#pragma once

#include "brain/ops/attractor_pull.h"
#include "brain/ops/field_readout.h"
#include "brain/ops/field_step.h"
#include "brain/ops/hierarchy_learn.h"
#include "brain/ops/novelty_modulation.h"
#include "brain/ops/op_registration.h"
#include "brain/ops/prediction.h"
#include "brain/ops/sensory_imprint.h"
#include "brain/ops/spontaneous_wave.h"

namespace fieldbrain {
namespace ops {

// Ops with a kernel per device (cpu/register.cpp, cuda/register.cpp).
using KernelOps = OpList<FieldStepOut, FieldStepSeededOut, PhiloxNormalOut,  // field_step.h
                         FieldReadoutOut, NoveltyModulation, SensoryImprint,
                         PredictionScore, PredictionAct,                      // prediction.h
                         HierarchyObserve, HierarchyApply, ErrorFieldUpdate,  // hierarchy_learn.h
                         AttractorRecord, AttractorPull,                      // attractor_pull.h
                         SpontaneousWaveOut>;

// Allocating variants, one composite kernel for every device (register.cpp).
using AllocatingOps = OpList<FieldStep, FieldStepSeeded, FieldReadout>;

}  // namespace ops
}  // namespace fieldbrain
