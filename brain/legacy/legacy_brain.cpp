#include "brain/legacy/legacy_brain.h"

#include <ATen/CPUGeneratorImpl.h>

#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "brain/legacy/legacy_cpu.h"
#include "brain/legacy/legacy_cycle.h"
#include "brain/legacy/numpy_random.h"
#include "brain/persistence.h"
#include "brain/save_mismatch.h"

namespace fieldbrain::legacy {

namespace {
constexpr const char* kFormat = "fieldbrain-legacy-brain";
constexpr int64_t kVersion = 1;

void check_options(const LegacyOptions& o) {
  if (o.sensory_dim < 1 || o.motor_dim < 1 || o.resolution < 8)
    throw std::invalid_argument(
        "legacy brain: needs sensory_dim >= 1, motor_dim >= 1, resolution >= 8");
  if (o.seed > 0xFFFFFFFFull)
    throw std::invalid_argument("legacy brain: the seed must be below 2^32 (numpy's seed range)");
  if (!cpu_runs_legacy_stencils())
    throw std::invalid_argument(
        "legacy brain: this CPU lacks AVX2 and FMA, which its diffusion stencils need");
}

std::unique_ptr<LegacyCycle> build(const LegacyOptions& o, NumpyRandomState& numpy) {
  // P1: torch.manual_seed, np.random.seed (random.seed draws nothing the brain uses)
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(o.seed);
  numpy.seed(static_cast<uint32_t>(o.seed));
  // EvolvedFieldDynamics._initialize_wave_vectors: numpy's draw is independent of torch's, so
  // it can be taken before the field's randn.
  const int64_t n_waves = numpy.randint(3, 6);
  return std::make_unique<LegacyCycle>(o.sensory_dim, o.motor_dim, o.resolution, n_waves,
                                       std::move(gen), o.planner);
}
}  // namespace

LegacyBrainImpl::LegacyBrainImpl(LegacyOptions o) : options_(o) {
  check_options(options_);
  numpy_ = std::make_unique<NumpyRandomState>();
  cycle_ = build(options_, *numpy_);
}

LegacyBrainImpl::~LegacyBrainImpl() = default;

std::vector<double> LegacyBrainImpl::step(const std::vector<double>& sensory_input, double now_s) {
  const auto L = static_cast<int64_t>(sensory_input.size());
  if (L != options_.sensory_dim && L != options_.sensory_dim + 1)
    throw std::invalid_argument("legacy brain: sensory input has " + std::to_string(L) +
                                " values, expected " + std::to_string(options_.sensory_dim) +
                                " (or one more, the reward)");
  for (int64_t i = 0; i < L; ++i) {
    const double v = sensory_input[static_cast<std::size_t>(i)];
    if (!std::isfinite(v) || v < -10.0 || v > 10.0)
      throw std::invalid_argument("legacy brain: sensory input value " + std::to_string(i) +
                                  " is not a finite number in [-10, 10]");
  }
  // The original keeps inputs of the first cycle's length in its memories: a later input of the
  // other length raises inside its cycle (a size mismatch) and returns M-1 zeros with the state
  // half changed. Refused here instead, before anything changes.
  if (cycle_->input_length() >= 0 && L != cycle_->input_length())
    throw std::invalid_argument("legacy brain: sensory input has " + std::to_string(L) +
                                " values, this brain's inputs have " +
                                std::to_string(cycle_->input_length()));
  if (!std::isfinite(now_s)) throw std::invalid_argument("legacy brain: the clock is not finite");
  std::vector<double> motors = cycle_->process(sensory_input, now_s);
  return motors;
}

int64_t LegacyBrainImpl::cycle() const { return cycle_->cycle(); }
nlohmann::json LegacyBrainImpl::brain_state() const { return cycle_->brain_state(); }
const LegacyOptions& LegacyBrainImpl::options() const { return options_; }
const torch::Tensor& LegacyBrainImpl::field() const { return cycle_->field(); }

void LegacyBrainImpl::save(const std::string& path) const {
  StateWriter w;
  cycle_->save(w);
  torch::Tensor key = torch::empty({NumpyRandomState::kStateLength}, torch::kInt64);
  for (int i = 0; i < NumpyRandomState::kStateLength; ++i)
    key.data_ptr<int64_t>()[i] = numpy_->key()[static_cast<std::size_t>(i)];
  w.tensor("numpy_key", key);
  nlohmann::json meta = {{"profile", "legacy"},
                         {"format", kFormat},
                         {"version", kVersion},
                         {"sensory_dim", options_.sensory_dim},
                         {"motor_dim", options_.motor_dim},
                         {"resolution", options_.resolution},
                         {"seed", options_.seed},
                         {"planner", planner_mode_name(options_.planner)},
                         {"cycle", cycle_->cycle()},
                         {"numpy_pos", numpy_->pos()},
                         {"state", w.state}};
  save_archive(path, w.tensors, meta);
}

void LegacyBrainImpl::load(const std::string& path) {
  Archive a = load_archive(path);
  const auto& m = a.meta;
  try {
    if (m.value("profile", "") == "fieldbrain") {
      // Intact but the other profile's: kept by the server, the robot refused (save_mismatch.h).
      throw SaveMismatch("a save of the \"fieldbrain\" profile; this brain runs \"legacy\"",
                         "profile", "\"fieldbrain\"", "\"legacy\"");
    }
    if (m.value("profile", "") != "legacy" || m.value("format", "") != kFormat)
      throw std::runtime_error("not a legacy brain archive");
    if (m.at("version").get<int64_t>() != kVersion)
      throw std::runtime_error("unsupported legacy archive version " + m.at("version").dump());
    const std::pair<const char*, int64_t> sizes[] = {{"resolution", options_.resolution},
                                                     {"sensory_dim", options_.sensory_dim},
                                                     {"motor_dim", options_.motor_dim}};
    for (const auto& [key, running] : sizes) {
      if (m.at(key).get<int64_t>() == running) continue;
      throw SaveMismatch("saved for other sizes (S/M/R " + m.at("sensory_dim").dump() + "/" +
                             m.at("motor_dim").dump() + "/" + m.at("resolution").dump() + ")",
                         key, m.at(key).dump(), std::to_string(running));
    }
    LegacyOptions o = options_;
    o.seed = m.at("seed").get<uint64_t>();
    auto numpy = std::make_unique<NumpyRandomState>();
    auto cycle = build(o, *numpy);
    StateReader r{a.tensors, m.at("state")};
    cycle->load(r);
    torch::Tensor key = r.tensor("numpy_key", torch::kInt64, {NumpyRandomState::kStateLength});
    std::array<uint32_t, NumpyRandomState::kStateLength> k{};
    for (int i = 0; i < NumpyRandomState::kStateLength; ++i)
      k[static_cast<std::size_t>(i)] = static_cast<uint32_t>(key.data_ptr<int64_t>()[i]);
    numpy->set_state(k, m.at("numpy_pos").get<int>());
    // everything read: commit
    options_ = o;
    numpy_ = std::move(numpy);
    cycle_ = std::move(cycle);
  } catch (const SaveMismatch& e) {
    throw SaveMismatch("legacy brain: cannot load " + path + ": " + e.what(), e.setting(),
                       e.saved(), e.running());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error("legacy brain: cannot load " + path + ": " + e.what());
  } catch (const std::exception& e) {
    throw std::runtime_error("legacy brain: cannot load " + path + ": " + e.what());
  }
}

}  // namespace fieldbrain::legacy
