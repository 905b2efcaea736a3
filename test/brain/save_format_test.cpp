// What a saved brain holds: plain dicts that Python opens with weights_only=True, and only the
// live attractor slots (a retired or never-used slot costs nothing).
#include "test/support/catch.h"

#include <cstdlib>
#include <filesystem>

#include "brain/field_brain.h"
#include "brain/persistence.h"
#include "test/brain/brain_state.h"
#include "test/support/old_release_saves.h"

namespace fieldbrain::test {

TEST_CASE("A saved brain stores only its live attractor slots and opens with weights_only",
          "[brain][persistence]") {
  const auto config = small_config(8);
  const std::vector<uint64_t> keys{21, 22};
  const auto path = temp_path("format.pt");
  auto brain = make_brain(config, keys);
  for (int64_t i = 0; i < 20; ++i) brain->step(test_sensors(i, keys, 24), test_reward(i, keys));
  const int64_t live = buffer(*brain, "attractors.valid").sum().item<int64_t>();
  // test_reward rewards each robot every 7th cycle: some slots are live, not all of them.
  REQUIRE(live > 0);
  REQUIRE(live < 2 * config.attractor_capacity);
  brain->save(path);

  const Archive a = load_archive(path);
  CHECK(a.version == 2);
  CHECK(a.tensors.count("state.attractors.bank") == 0);
  const auto& rows = a.tensors.at("packed.attractors.bank.rows");
  CHECK(rows.size(0) == live);
  CHECK(rows.sizes().slice(1) == torch::IntArrayRef({64, 8, 8, 8}));
  // The file is the state minus the dead slots: every other buffer (the noise key included),
  // the live slots and a little zip/pickle framing (64 KiB is generous at R = 8).
  int64_t state_bytes = 0;
  for (const auto& [name, t] : snapshot(*brain))
    if (name != "attractors.bank") state_bytes += t.numel() * t.element_size();
  const int64_t slot_bytes = 64 * 8 * 8 * 8 * 4;
  CHECK(static_cast<int64_t>(std::filesystem::file_size(path)) <
        state_bytes + live * slot_bytes + 64 * 1024);
  const std::string cmd = std::string(FIELDBRAIN_PYTHON) +
                          " -c \"import torch; a = torch.load('" + path +
                          "', weights_only=True); t = a['tensors']; "
                          "assert t['packed.attractors.bank.rows'].shape[0] == " +
                          std::to_string(live) + "\"";
  CHECK(std::system(cmd.c_str()) == 0);
  std::filesystem::remove(path);
}

TEST_CASE("A version-4 save holds its profile, the noise key (seed, cycle) and no generator state",
          "[brain][persistence][philox]") {
  const auto config = small_config(8);
  const std::vector<uint64_t> keys{5, 6};
  const auto path = temp_path("v3.pt");
  auto brain = make_brain(config, keys);
  for (int64_t i = 0; i < 7; ++i) brain->step(test_sensors(i, keys, 24), test_reward(i, keys));
  brain->save(path);
  const Archive a = load_archive(path);
  CHECK(a.meta.at("version") == 4);
  CHECK(a.meta.at("profile") == "fieldbrain");
  CHECK(a.meta.at("config").at("profile") == "fieldbrain");
  for (const auto& [name, t] : a.tensors) CHECK(name.rfind("generator.", 0) == std::string::npos);
  const auto key = a.tensors.at("state.noise_key");
  REQUIRE(key.sizes() == torch::IntArrayRef({2, 2}));
  for (int64_t b = 0; b < 2; ++b) {
    CHECK(static_cast<uint64_t>(key[b][0].item<int64_t>()) == robot_seed(config.seed, keys[b]));
    CHECK(key[b][1].item<int64_t>() == 7);
  }
  // Round trip: a fresh brain loads it and continues exactly like the saved one.
  auto loaded = make_brain(config, keys);
  loaded->load(path);
  CHECK(loaded->loaded_archive_version() == 4);
  CHECK(first_difference(snapshot(*brain), snapshot(*loaded)).empty());
  for (int64_t i = 7; i < 12; ++i) {
    const auto s = test_sensors(i, keys, 24);
    const auto r = test_reward(i, keys);
    CHECK(torch::equal(brain->step(s, r), loaded->step(s, r)));
  }
  std::filesystem::remove(path);
}

// A version-2 file made from today's state (the same tensors, no noise key, one mt19937
// generator state per robot of 5056 bytes, meta version 2): it shows that the migrated brain
// continues exactly like the one that saved it. The files the old releases wrote themselves
// are loaded by the "[old-saves]" tests at the end of this file.
void write_version_2(const FieldBrainImpl& brain, const std::string& path, uint64_t saved_seed) {
  ArchiveContents old = brain.archive_contents();
  old.tensors.erase("state.noise_key");
  for (int64_t b = 0; b < brain.batch(); ++b) {
    old.tensors["generator." + std::to_string(b)] = torch::zeros({5056}, torch::kUInt8);
  }
  old.meta["version"] = 2;
  old.meta["config"]["seed"] = saved_seed;
  old.save(path);
}

TEST_CASE("A version-2 save is migrated: its state loads and the noise follows Philox from its cycle",
          "[brain][persistence][philox]") {
  const auto config = small_config(8);
  const std::vector<uint64_t> keys{5, 6};
  const auto path = temp_path("v2.pt");
  auto brain = make_brain(config, keys);
  for (int64_t i = 0; i < 9; ++i) brain->step(test_sensors(i, keys, 24), test_reward(i, keys));
  write_version_2(*brain, path, config.seed);

  BrainConfig other_seed = config;
  other_seed.seed = config.seed + 1;  // the migrated key comes from the save's seed
  auto loaded = make_brain(other_seed, keys);
  loaded->load(path);
  CHECK(loaded->loaded_archive_version() == 2);
  CHECK(loaded->cycle() == 9);
  // Every tensor loaded, and the noise key rebuilt from (saved seed, robot key, saved cycle):
  // the same key a brain of this release had, so the run continues as if never saved.
  CHECK(first_difference(snapshot(*brain), snapshot(*loaded)).empty());
  for (int64_t i = 9; i < 14; ++i) {
    const auto s = test_sensors(i, keys, 24);
    const auto r = test_reward(i, keys);
    CHECK(torch::equal(brain->step(s, r), loaded->step(s, r)));
  }
  // Saving again writes version 4.
  loaded->save(path);
  CHECK(load_archive(path).meta.at("version") == 4);
  std::filesystem::remove(path);
}

TEST_CASE("A save from a newer release is refused with its version named", "[brain][persistence]") {
  const auto config = small_config(8);
  const std::vector<uint64_t> keys{5};
  const auto path = temp_path("v5.pt");
  auto brain = make_brain(config, keys);
  ArchiveContents future = brain->archive_contents();
  future.meta["version"] = 5;
  future.save(path);
  auto other = make_brain(config, keys);
  const auto before = snapshot(*other);
  CHECK_THROWS_WITH(other->load(path), Catch::Contains("unsupported brain archive version 5"));
  CHECK(first_difference(before, snapshot(*other)).empty());
  // A file whose key disagrees with its cycle counter is refused too.
  ArchiveContents bad = brain->archive_contents();
  bad.tensors["state.noise_key"][0][1] = 5;
  bad.save(path);
  CHECK_THROWS_WITH(other->load(path), Catch::Contains("noise_key's cycles differ"));
  std::filesystem::remove(path);
}


TEST_CASE("A version-3 save, without a profile, loads as the fieldbrain profile",
          "[brain][persistence]") {
  const auto config = small_config(8);
  const std::vector<uint64_t> keys{5};
  const auto path = temp_path("v3.pt");
  auto brain = make_brain(config, keys);
  for (int64_t i = 0; i < 4; ++i) brain->step(test_sensors(i, keys, 24), test_reward(i, keys));
  ArchiveContents old = brain->archive_contents();
  old.meta["version"] = 3;
  old.meta.erase("profile");
  old.meta["config"].erase("profile");
  old.meta["config"].erase("legacy_clock");
  old.meta["config"].erase("legacy_planner");
  old.meta["config"].erase("legacy_reward");
  old.save(path);
  auto loaded = make_brain(config, keys);
  loaded->load(path);
  CHECK(loaded->loaded_archive_version() == 3);
  CHECK(first_difference(snapshot(*brain), snapshot(*loaded)).empty());
  std::filesystem::remove(path);
}

TEST_CASE("A save of the legacy profile is refused with the profile named",
          "[brain][persistence]") {
  const auto config = small_config(8);
  const std::vector<uint64_t> keys{5};
  const auto path = temp_path("legacy.pt");
  auto brain = make_brain(config, keys);
  ArchiveContents other_profile = brain->archive_contents();
  other_profile.meta = {{"profile", "legacy"}, {"format", "fieldbrain-legacy-brain"}};
  other_profile.save(path);
  auto fresh = make_brain(config, keys);
  const auto before = snapshot(*fresh);
  CHECK_THROWS_WITH(fresh->load(path), Catch::Contains("\"legacy\" profile"));
  CHECK(first_difference(before, snapshot(*fresh)).empty());
  std::filesystem::remove(path);
}

// Saves written by the releases that wrote versions 1, 2 and 3 (test/fixtures/saves/README.md,
// scripts/make_old_saves.sh). Beside each, the old release recorded what it held when it saved
// (brain-v<N>.json): the expected values come from that release, not from today's code.
namespace {

struct OldBrain {
  int version;
  nlohmann::json sidecar;
  BrainConfig config;  // the saved shape, and another seed: what the load keeps comes from the file
  std::vector<uint64_t> keys;
  std::string path;
};

OldBrain old_brain(int version, uint64_t seed_offset = 1) {
  OldBrain old;
  old.version = version;
  old.sidecar = old_save_sidecar("brain-v" + std::to_string(version) + ".json");
  const nlohmann::json& c = old.sidecar.at("config");
  old.config = small_config(c.at("resolution").get<int64_t>(), c.at("sensory_dim").get<int64_t>(),
                            c.at("motor_dim").get<int64_t>());
  old.config.attractor_capacity = c.at("attractor_capacity").get<int64_t>();
  old.config.seed = c.at("seed").get<uint64_t>() + seed_offset;
  old.keys = old.sidecar.at("robot_keys").get<std::vector<uint64_t>>();
  old.path = old_save_path(old.sidecar.at("file").get<std::string>());
  return old;
}

}  // namespace

TEST_CASE("Brains saved by the releases that wrote versions 1, 2 and 3 load with every buffer as "
          "that release held it",
          "[brain][persistence][old-saves]") {
  for (const int version : old_brain_versions()) {
    CAPTURE(version);
    const OldBrain old = old_brain(version);
    auto brain = make_brain(old.config, old.keys);
    brain->load(old.path);
    CHECK(brain->loaded_archive_version() == version);
    CHECK(brain->cycle() == old.sidecar.at("cycles").get<int64_t>());
    const auto now = snapshot(*brain);
    const nlohmann::json& saved = old.sidecar.at("buffers");
    for (const auto& [name, entry] : saved.items()) {
      CAPTURE(name);
      REQUIRE(now.count(name) == 1);
      // The bank with its empty slots zeroed, as snapshot() reads it; the old release held one
      // live slot of two (version 2 and later saved only that one).
      const bool bank = name == "attractors.bank";
      if (bank) CHECK(entry.at("live_slots") == 1);
      CHECK(matches_sidecar(now.at(name), entry, bank ? "live_slots_sha256" : "sha256"));
    }
    // Today's brain holds nothing the old file lacks, except the noise key of version 3.
    std::vector<std::string> unsaved;
    for (const auto& [name, t] : now) {
      if (!saved.contains(name)) unsaved.push_back(name);
    }
    CHECK(unsaved == (version < 3 ? std::vector<std::string>{"noise_key"}
                                  : std::vector<std::string>{}));
  }
}

TEST_CASE("A version-1 or version-2 brain from its old release gets the noise key that a brain "
          "born with the saved seed has at the saved cycle",
          "[brain][persistence][old-saves][philox]") {
  for (const int version : {1, 2}) {
    CAPTURE(version);
    const OldBrain old = old_brain(version);
    auto loaded = make_brain(old.config, old.keys);
    loaded->load(old.path);
    // Independent of the loader: a brain of this release born with the saved seed and run for
    // as many cycles (docs/robots.md "Save versions": the noise continues on the streams of the
    // seed the robot was born with, from the saved cycle).
    BrainConfig born = old.config;
    born.seed = old.sidecar.at("config").at("seed").get<uint64_t>();
    auto fresh = make_brain(born, old.keys);
    const int64_t S = born.sensory_dim;
    for (int64_t i = 0; i < old.sidecar.at("cycles").get<int64_t>(); ++i)
      fresh->step(test_sensors(i, old.keys, S), test_reward(i, old.keys));
    CHECK(torch::equal(buffer(*loaded, "noise_key"), buffer(*fresh, "noise_key")));
  }
}

TEST_CASE("A brain from an old release runs on after the load whatever seed the running config "
          "has, and its next save is version 4",
          "[brain][persistence][old-saves][philox]") {
  for (const int version : old_brain_versions()) {
    CAPTURE(version);
    const OldBrain one = old_brain(version, 1);
    const OldBrain other = old_brain(version, 2);
    auto a = make_brain(one.config, one.keys);
    auto b = make_brain(other.config, other.keys);
    a->load(one.path);
    b->load(other.path);
    const int64_t saved_cycles = one.sidecar.at("cycles").get<int64_t>();
    for (int64_t i = saved_cycles; i < saved_cycles + 3; ++i) {
      const auto s = test_sensors(i, one.keys, one.config.sensory_dim);
      const auto r = test_reward(i, one.keys);
      const torch::Tensor motors = a->step(s, r);
      CHECK(torch::equal(motors, b->step(s, r)));
      CHECK(motors.abs().max().item<float>() < 1.0f);  // finite and in (-1, 1)
    }
    CHECK(a->cycle() == saved_cycles + 3);
    const auto path = temp_path("old-v" + std::to_string(version) + "-resaved.pt");
    a->save(path);
    const Archive resaved = load_archive(path);
    CHECK(resaved.meta.at("version") == 4);
    CHECK(resaved.meta.at("profile") == "fieldbrain");
    auto c = make_brain(one.config, one.keys);
    c->load(path);
    CHECK(c->loaded_archive_version() == 4);
    CHECK(first_difference(snapshot(*a), snapshot(*c)).empty());
    std::filesystem::remove(path);
  }
}

}  // namespace fieldbrain::test
