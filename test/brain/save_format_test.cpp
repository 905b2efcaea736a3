// What a saved brain holds: plain dicts that Python opens with weights_only=True, and only the
// live attractor slots (a retired or never-used slot costs nothing).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "brain/field_brain.h"
#include "brain/persistence.h"
#include "test/brain/brain_state.h"

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
  // The file is the state minus the dead slots: every other buffer, the live slots, the
  // generator states and a little zip/pickle framing (64 KiB is generous at R = 8).
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

}  // namespace fieldbrain::test
