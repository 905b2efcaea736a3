// FieldBrainImpl's archive: what save() writes and load() reads (brain/persistence.h holds the
// file format; this file decides which tensors and metadata make up a brain).
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "brain/field_brain.h"
#include "brain/field_brain_parts.h"
#include "brain/persistence.h"
#include "brain/save_mismatch.h"
#include "brain/saved_profile.h"
#include "brain/sync_counter.h"

namespace fieldbrain {

namespace {

constexpr const char* kArchiveFormat = "fieldbrain-brain";
// Version 4: version 3 with the meta "profile": "fieldbrain" (the legacy profile's saves say
// "legacy" and are refused here by name; a save without it, version 3 or older, is this
// profile's). Version 3: the randomness state is the buffer noise_key (seed, cycle per robot); no
// generator states. Version 2 stored only the live attractor slots (brain/persistence.h,
// PackedSlots) and version 1 the whole bank, both with mt19937 generator states: they are
// migrated on load (docs/robots.md "Save versions"): everything is loaded, the generator states
// are dropped and the noise continues on the Philox streams of (the saved config's seed,
// the robot key) from the saved cycle.
constexpr int kArchiveVersion = FieldBrainImpl::kArchiveVersion;
constexpr const char* kNoiseKeyBuffer = "noise_key";

// A slot buffer's live slots in the archive (brain/persistence.h, PackedSlots): since version 2,
// "packed.<buffer>.rows" and "packed.<buffer>.index" instead of "state.<buffer>" (the attractor
// bank's, "packed.attractors.bank.*", is the only one so far).
std::string packed_rows_key(const std::string& buffer) { return "packed." + buffer + ".rows"; }
std::string packed_index_key(const std::string& buffer) { return "packed." + buffer + ".index"; }

}  // namespace

void FieldBrainImpl::save(const std::string& path) const { archive_contents().save(path); }

ArchiveContents FieldBrainImpl::archive_contents() const {
  ArchiveContents out;
  std::map<std::string, torch::Tensor>& tensors = out.tensors;
  const auto buffers = named_buffers(true);
  const auto live_flags = live_slot_index(*this);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const auto& item = buffers[i];
    if (live_flags[i] >= 0) {
      const PackedSlots packed = pack_live_slots(item.value(), buffers[live_flags[i]].value());
      tensors[packed_rows_key(item.key())] = packed.rows;
      tensors[packed_index_key(item.key())] = packed.index;
      continue;
    }
    tensors["state." + item.key()] =
        item.value().device().is_cpu() ? item.value().clone() : SyncCounter::to_host(item.value());
  }
  nlohmann::json& meta = out.meta;
  meta["format"] = kArchiveFormat;
  meta["version"] = kArchiveVersion;
  // Which cycle saved it (the legacy profile's saves say "legacy"); saves made before profiles
  // existed have no "profile" and are read as this one.
  meta["profile"] = to_string(BrainProfile::Fieldbrain);
  meta["config"] = config_;
  meta["robot_keys"] = keys_;
  return out;
}

void FieldBrainImpl::load(const std::string& path) {
  const Archive a = load_archive(path);
  auto fail = [&](const std::string& what) {
    throw std::runtime_error(fmt::format("FieldBrain::load({}): {}", path, what));
  };
  const std::string profile = saved_profile(a.meta);
  if (!profile.empty() && profile != to_string(BrainProfile::Fieldbrain)) {
    // Intact but another profile's: the server keeps it and refuses the robot (save_mismatch.h).
    throw SaveMismatch(
        fmt::format("FieldBrain::load({}): a save of the \"{}\" profile; this brain runs "
                    "\"profile\": \"fieldbrain\" and loads only its own saves",
                    path, profile),
        "profile", nlohmann::json(profile).dump(), "\"fieldbrain\"");
  }
  // The metadata is read by hand: json::value() throws json errors that name no file on a
  // wrong type, and get<int>() of 1e300 is undefined.
  const auto field = [&](const nlohmann::json& j, const char* key) -> const nlohmann::json* {
    const auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
  };
  const nlohmann::json* format = a.meta.is_object() ? field(a.meta, "format") : nullptr;
  if (!format || *format != kArchiveFormat) fail("not a fieldbrain brain archive");
  const nlohmann::json* version_field = field(a.meta, "version");
  if (!version_field || !version_field->is_number_integer() || *version_field < 1 ||
      *version_field > kArchiveVersion) {
    fail(fmt::format("unsupported brain archive version {} (this build reads 1 to {})",
                     version_field ? version_field->dump() : "(none)", kArchiveVersion));
  }
  const int version = version_field->get<int>();
  // The shape-defining part of the config must match; the seed (the noise key is restored),
  // the field step implementation, the device and the telemetry cadence may differ.
  const nlohmann::json* config_field = field(a.meta, "config");
  if (config_field && !config_field->is_object()) fail("metadata: config is not an object");
  const nlohmann::json saved_config = config_field ? *config_field : nlohmann::json::object();
  for (const char* key : {"sensory_dim", "motor_dim", "resolution", "attractor_capacity"}) {
    if (saved_config.value(key, nlohmann::json()) != nlohmann::json(config_)[key]) {
      const std::string saved = saved_config.value(key, nlohmann::json()).dump();
      const std::string running = nlohmann::json(config_)[key].dump();
      throw SaveMismatch(fmt::format("FieldBrain::load({}): config mismatch on {}: archive {} vs "
                                     "brain {}",
                                     path, key, saved, running),
                         key, saved, running);
    }
  }
  const nlohmann::json* saved_keys = field(a.meta, "robot_keys");
  if (!saved_keys || *saved_keys != nlohmann::json(keys_)) fail("robot keys differ");
  const nlohmann::json* saved_seed = field(saved_config, "seed");
  if (saved_seed && !saved_seed->is_number_integer())
    fail("metadata: config.seed is not an integer");
  // Check everything before changing anything.
  const auto buffers = named_buffers(true);
  const auto live_flags = live_slot_index(*this);
  const bool packed_slots = version >= 2;  // version 1 saved slot buffers whole
  const bool migrate_noise = version < 3;  // v1/v2: generator states instead of noise_key
  for (size_t i = 0; i < buffers.size(); ++i) {
    const auto& item = buffers[i];
    if (migrate_noise && item.key() == kNoiseKeyBuffer) continue;
    if (packed_slots && live_flags[i] >= 0) {
      const std::string rows_key = packed_rows_key(item.key()), index_key = packed_index_key(item.key());
      if (!a.tensors.count(rows_key) || !a.tensors.count(index_key))
        fail("missing packed live slots of " + item.key());
      try {
        check_packed_slots(item.value(), a.tensors.at(rows_key), a.tensors.at(index_key));
      } catch (const std::exception& e) {
        fail(e.what());
      }
      continue;
    }
    const auto it = a.tensors.find("state." + item.key());
    if (it == a.tensors.end()) fail("missing tensor " + item.key());
    if (it->second.sizes() != item.value().sizes() || it->second.scalar_type() != item.value().scalar_type()) {
      fail("tensor " + item.key() + " has the wrong shape or dtype");
    }
  }
  // The noise key: saved (v3; its cycle column must be the saved cycle counts), or made from
  // the saved config's seed, the robot keys and the saved cycle counts (v1/v2 migration).
  const auto saved_cycles = a.tensors.at("state.cycles");
  torch::Tensor noise_key;
  if (migrate_noise) {
    const uint64_t seed = saved_seed ? saved_seed->get<uint64_t>() : config_.seed;
    noise_key = torch::zeros({batch(), 2}, torch::kLong);
    for (int64_t b = 0; b < batch(); ++b) {
      noise_key[b][0] = static_cast<int64_t>(robot_seed(seed, keys_[b]));
    }
    noise_key.select(1, 1).copy_(saved_cycles);
  } else {
    noise_key = a.tensors.at(std::string("state.") + kNoiseKeyBuffer);
    if (!torch::equal(noise_key.select(1, 1), saved_cycles)) {
      fail("noise_key's cycles differ from the saved cycle counts");
    }
  }
  torch::NoGradGuard no_grad;
  loaded_archive_version_ = version;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const auto& item = buffers[i];
    if (item.key() == kNoiseKeyBuffer) {
      item.value().copy_(noise_key);
    } else if (packed_slots && live_flags[i] >= 0) {
      torch::Tensor slots = item.value();
      unpack_live_slots(slots, a.tensors.at(packed_rows_key(item.key())),
                        a.tensors.at(packed_index_key(item.key())));
    } else {
      item.value().copy_(a.tensors.at("state." + item.key()));
    }
  }
}

}  // namespace fieldbrain
