#include "brain/cycle.h"

#include <stdexcept>
#include <utility>

#include "brain/cycle_fused.h"
#include "brain/cycle_reference.h"
#include "brain/field_brain.h"
#include "brain/field_brain_parts.h"

namespace fieldbrain {

BrainParts& Cycle::parts() const { return *brain_.parts_; }
torch::Tensor& Cycle::field() const { return brain_.field_; }
const torch::Tensor& Cycle::noise_key() const { return brain_.noise_key_; }
StageTimer& Cycle::stages() const { return brain_.stages_; }
const std::vector<BrainModule*>& Cycle::modules() const { return brain_.modules_; }
const BrainConfig& Cycle::config() const { return brain_.config_; }
torch::Device Cycle::device() const { return brain_.device_; }
int64_t Cycle::batch() const { return brain_.batch(); }
torch::Tensor Cycle::register_scratch(torch::Tensor t) const { return brain_.register_scratch(std::move(t)); }

void Cycle::finish(const torch::Tensor& imprinted) const {
  BrainParts& p = parts();
  const auto& mod = *p.modulation;
  brain_.noise_key_.add_(brain_.key_step_);  // (0, 1) per robot: the next cycle (no scalar tensor made)
  // Telemetry columns copied in place (a stack would make a tensor every cycle).
  const std::pair<TelemetryColumn, const torch::Tensor*> columns[] = {
      {kTeleConfidence, &p.prediction->conf}, {kTeleNovelty, &mod.novelty},
      {kTeleExplore, &mod.explore},           {kTeleDrive, &mod.drive},
      {kTeleImprint, &mod.imp},               {kTeleDecay, &mod.decay},
      {kTeleSmoothedInfo, &mod.si},           {kTeleSmoothedConf, &mod.sc},
      {kTeleSigma, &mod.sigma},               {kTeleActiveCells, &p.pooling->n_active},
      {kTeleImprintApplied, &imprinted}};
  for (const auto& [column, value] : columns) brain_.telemetry_.select(1, column).copy_(*value);
  stages().mark("telemetry");
}

std::unique_ptr<Cycle> make_cycle(BrainCycle which, FieldBrainImpl& brain) {
  switch (which) {
    case BrainCycle::Reference: return std::make_unique<ReferenceCycle>(brain);
    case BrainCycle::Fused: return std::make_unique<FusedCycle>(brain);
    case BrainCycle::Legacy: break;
  }
  throw std::invalid_argument("FieldBrain: \"profile\": \"legacy\" runs brain/legacy, not this brain");
}

}  // namespace fieldbrain
