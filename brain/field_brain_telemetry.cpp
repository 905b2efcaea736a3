// FieldBrainImpl's read-outs for monitors and tools: the legacy telemetry dict of one robot and
// slices of its field. Each is one host copy, made on request, never during a cycle.
#include <stdexcept>

#include <fmt/format.h>

#include "brain/field_brain.h"
#include "brain/field_brain_parts.h"
#include "brain/ops/field_readout.h"
#include "brain/sync_counter.h"

namespace fieldbrain {

nlohmann::json FieldBrainImpl::telemetry(int64_t robot) {
  if (robot < 0 || robot >= batch()) {
    throw std::invalid_argument(fmt::format("FieldBrain::telemetry: robot {} out of range [0,{})", robot, batch()));
  }
  torch::NoGradGuard no_grad;
  // mean|F| and max|F| from one pass of the fused read-out (summary entries 0 and 1).
  static_assert(ops::kSummaryMaxAbs == ops::kSummaryAbsMean + 1, "adjacent in the summary");
  const auto stats = ops::field_readout(field_.slice(0, robot, robot + 1));
  const int64_t first = ops::kReadoutSummary + ops::kSummaryAbsMean;
  const auto row = SyncCounter::to_host(
      torch::cat({telemetry_[robot], stats[0].slice(0, first, first + 2)}));
  const float* v = row.data_ptr<float>();
  const BrainParts& p = *parts_;
  return nlohmann::json{
      {"cycle", cycles_.data_ptr<int64_t>()[robot]},
      {"cycle_time_ms", last_cycle_ms_},
      {"field_information", v[kTeleColumns]},
      {"max_activation", v[kTeleColumns + 1]},
      {"prediction_confidence", v[kTeleConfidence]},
      {"novelty", v[kTeleNovelty]},
      {"exploration_drive", v[kTeleExplore]},
      {"internal_drive", v[kTeleDrive]},
      {"imprint_strength", v[kTeleImprint]},
      {"imprint_applied", v[kTeleImprintApplied]},
      {"decay_rate", v[kTeleDecay]},
      {"smoothed_information", v[kTeleSmoothedInfo]},
      {"smoothed_confidence", v[kTeleSmoothedConf]},
      {"self_modification_strength", v[kTeleSigma]},
      {"active_cells", static_cast<int64_t>(v[kTeleActiveCells])},
      {"attractors", p.attractors->live(robot)},
      {"cycles_without_input", p.modulation->cycles_without_input(robot)},
  };
}

torch::Tensor FieldBrainImpl::field_slice(int64_t robot, int64_t channel, int64_t z) {
  const int64_t R = config_.resolution;
  if (robot < 0 || robot >= batch() || channel < 0 || channel >= 64 || z < 0 || z >= R) {
    throw std::invalid_argument(fmt::format(
        "FieldBrain::field_slice: (robot {}, channel {}, z {}) out of range (B {}, 64, R {})", robot,
        channel, z, batch(), R));
  }
  return SyncCounter::to_host(field_[robot][channel].select(2, z));
}

}  // namespace fieldbrain
