// The whole brain on CUDA against the whole brain on the CPU (same seed, same inputs), its one
// device-to-host copy per cycle, steady CUDA memory, and saves that cross devices.
#include "test/support/catch.h"

#include <cstdlib>
#include <filesystem>

#include "brain/field_brain.h"
#include "brain/sync_counter.h"
#include "test/brain/brain_state.h"
#include "test/support/devices.h"

namespace fieldbrain::test {
namespace {

constexpr double kCudaTolerance = 1e-4;

std::vector<uint64_t> cuda_test_keys(int64_t B) {
  std::vector<uint64_t> keys;
  for (int64_t b = 0; b < B; ++b) keys.push_back(static_cast<uint64_t>(101 + b));
  return keys;
}

BrainConfig with_device(BrainConfig config, const std::string& device) {
  config.device = device;
  return config;
}

}  // namespace

TEST_CASE("The whole brain on CUDA follows the brain on the CPU for 200 cycles", "[cuda][brain]") {
  if (!cuda_or_skip("whole brain CUDA vs CPU, 200 cycles")) return;
  const int64_t B = GENERATE(1, 4);
  const std::string field_step = GENERATE("reference", "fast");
  CAPTURE(B, field_step);
  auto config = small_config(16);
  config.field_step = field_step;
  const auto keys = cuda_test_keys(B);
  auto cpu = make_brain(with_device(config, "cpu"), keys);
  auto gpu = make_brain(with_device(config, "cuda"), keys);
  REQUIRE(gpu->field().is_cuda());
  for (int64_t i = 0; i < 200; ++i) {
    const auto s = test_sensors(i, keys, config.sensory_dim);
    const auto r = test_reward(i, keys);
    const auto motors_cpu = cpu->step(s, r);
    const auto motors_gpu = gpu->step(s, r);
    INFO("cycle " << i);
    REQUIRE(max_diff(motors_gpu, motors_cpu) <= kCudaTolerance);
    REQUIRE(max_diff(gpu->field().cpu(), cpu->field()) <= kCudaTolerance);
  }
}

TEST_CASE("A CUDA brain copies to the host once per cycle and its reserved memory stops growing",
          "[cuda][brain]") {
  if (!cuda_or_skip("one device-to-host copy per cycle, steady CUDA memory")) return;
  auto config = with_device(small_config(16), "cuda");
  config.field_step = "fast";
  const auto keys = cuda_test_keys(4);
  auto brain = make_brain(config, keys);
  for (int64_t i = 0; i < 30; ++i) brain->step(test_sensors(i, keys, 24), test_reward(i, keys));
  const int64_t reserved = cuda_reserved_bytes();
  for (int64_t i = 30; i < 130; ++i) {
    SyncCounter::reset();
    brain->step(test_sensors(i, keys, 24), test_reward(i, keys));
    INFO("cycle " << i);
    REQUIRE(SyncCounter::count() == 1);
  }
  if (reserved >= 0) {
    CHECK(cuda_reserved_bytes() == reserved);
  } else {
    WARN("CUDA reserved bytes not checked: this build has no CUDA allocator statistics");
  }
}

TEST_CASE("A brain saved on one device loads on the other and in Python with weights_only",
          "[cuda][brain][persistence]") {
  if (!cuda_or_skip("saves across devices")) return;
  const std::string from = GENERATE("cpu", "cuda");
  const std::string to = from == "cpu" ? "cuda" : "cpu";
  CAPTURE(from, to);
  const auto config = small_config(8);
  const std::vector<uint64_t> keys{7, 8};
  const auto path = temp_path("cuda-" + from + ".pt");
  auto saved = make_brain(with_device(config, from), keys);
  for (int64_t i = 0; i < 25; ++i) saved->step(test_sensors(i, keys, 24), test_reward(i, keys));
  saved->save(path);
  const std::string cmd = std::string(FIELDBRAIN_PYTHON) +
                          " -c \"import torch; a = torch.load('" + path +
                          "', weights_only=True); assert a['version'] == 2\"";
  CHECK(std::system(cmd.c_str()) == 0);

  auto loaded = make_brain(with_device(config, to), keys);
  loaded->load(path);
  CHECK(loaded->field().device().type() == torch::Device(to).type());
  CHECK(first_difference(snapshot(*saved), snapshot(*loaded)).empty());
  for (int64_t i = 25; i < 35; ++i) {
    const auto s = test_sensors(i, keys, 24);
    const auto r = test_reward(i, keys);
    INFO("cycle " << i);
    REQUIRE(max_diff(saved->step(s, r), loaded->step(s, r)) <= kCudaTolerance);
  }
  std::filesystem::remove(path);
}

TEST_CASE("On CUDA the fast cycle replayed from its graph equals the eager cycle exactly",
          "[cuda][brain][graph]") {
  if (!cuda_or_skip("CUDA graph replay vs eager cycles")) return;
  auto config = small_config(16);
  config.field_step = "fast";
  config.device = "cuda";
  const auto keys = cuda_test_keys(3);
  auto eager = make_brain(config, keys);
  auto graphed = make_brain(config, keys);
  for (int i = 0; i < 60; ++i) {
    auto s = test_sensors(i, keys, config.sensory_dim);
    if (i >= 20 && i < 30) s[1].zero_();  // silence: the imprint's per-robot skip inside the graph
    const auto r = test_reward(i, keys);  // stored and pulling attractors of both signs
    ::setenv("FIELDBRAIN_CUDA_GRAPH", "0", 1);
    const auto m_eager = eager->step(s, r);
    ::unsetenv("FIELDBRAIN_CUDA_GRAPH");
    const auto m_graph = graphed->step(s, r);
    INFO("cycle " << i);
    REQUIRE(torch::equal(m_eager, m_graph));
    REQUIRE(torch::equal(eager->field().cpu(), graphed->field().cpu()));
  }
  CHECK(eager->cycle_graph_replays() == 0);
  // Two warm-up cycles run eagerly; every later one is a replay.
  CHECK(graphed->cycle_graph_replays() == 60 - CycleGraph::kWarmCycles);
}

}  // namespace fieldbrain::test
