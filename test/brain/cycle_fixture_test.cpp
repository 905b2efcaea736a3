// The cycle's numbers pinned bit for bit: 200 cycles at R = 16, S = 12, M = 4 on the CPU, one
// robot and four, on the reference and the fast path, against digests stored in
// test/fixtures/cycle/ by an earlier build. A refactoring of the cycle (how it is organised, not
// what it computes) must leave every digest as it was.
//
// The digests are FNV-1a-64 of the raw float bytes: the motors of every block of 10 cycles, and
// every registered buffer after the last cycle (the field, the rings, the attractor bank, the
// telemetry ...), so a changed rounding anywhere shows up with the name of what moved.
//
// FIELDBRAIN_WRITE_FIXTURE=1 rewrites the files instead of comparing (only to pin a deliberate
// change of the numbers, with the reason in the commit).
//
// Bits are a property of a platform as well as of the code: the files carry the platform they
// were pinned on (LibTorch, compiler, C library, the CPU kernels: fieldbrain's passes and
// ATen's capability). One set per variant of fieldbrain's passes, in test/fixtures/cycle/<isa>/
// (README.md there): avx512/ and avx2/. An AVX-512 machine runs the AVX2 set with
// FIELDBRAIN_ISA=avx2 ATEN_CPU_CAPABILITY=avx2 (the CTest variant in test/brain/CMakeLists.txt).
// Where no set matches the platform the test is reported skipped with the reason. Debian 13
// (LibTorch 2.6, g++ 14, glibc 2.41) gives other bits from the first fast cycle: other
// compilers contract other multiply-adds, and other C libraries round expf/tanhf differently.
#include "test/support/catch.h"
#include "test/support/cpu_kernels.h"
#include "test/support/skip.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gnu/libc-version.h>
#include <torch/version.h>

#include "brain/field_brain.h"
#include "brain/ops/cpu/isa_choice.h"
#include "test/brain/brain_state.h"

namespace fieldbrain::test {
namespace {

constexpr int kCycles = 200;
constexpr int kBlock = 10;  // cycles of motors per digest

uint64_t fixture_fnv1a64(const torch::Tensor& t) {
  const auto c = t.detach().to(torch::kCPU).contiguous();
  const auto* p = static_cast<const unsigned char*>(c.data_ptr());
  const size_t n = static_cast<size_t>(c.numel()) * c.element_size();
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Sensors of robot b at cycle n: a formula of both, with a silent stretch for robot 1 (cycles
// 60-79: the no-input path) so the imprint is skipped there.
torch::Tensor fixture_sensors(int64_t n, int64_t B, int64_t S) {
  auto t = torch::empty({B, S}, torch::kFloat);
  auto* p = t.data_ptr<float>();
  for (int64_t b = 0; b < B; ++b) {
    const bool silent = b == 1 && n >= 60 && n < 80;
    for (int64_t j = 0; j < S; ++j) {
      p[b * S + j] = silent ? 0.0f
                            : static_cast<float>(0.7 * std::sin(0.07 * (j + 1) * n + 0.9 * b + 0.4 * j) +
                                                 0.2 * std::cos(0.013 * n * (b + 1)));
    }
  }
  return t;
}

// Rewards: |r| > 0.1 stores an attractor; every robot gets some, often enough to wrap a bank of
// 4 slots, and small ones (|r| <= 0.1) that store nothing.
torch::Tensor fixture_reward(int64_t n, int64_t B) {
  auto t = torch::zeros({B}, torch::kFloat);
  auto* p = t.data_ptr<float>();
  for (int64_t b = 0; b < B; ++b) {
    const int64_t k = (n + 3 * b) % 9;
    if (k == 2) p[b] = 0.5f + 0.05f * static_cast<float>(b);
    else if (k == 6) p[b] = -0.3f;
    else if (k == 4) p[b] = 0.05f;
  }
  return t;
}

const char* const kIsaNames[] = {"default", "avx2", "avx512"};

// The variant of fieldbrain's own passes: the fixture set's folder (avx512/, avx2/, ...).
std::string fieldbrain_kernels() { return kIsaNames[static_cast<int>(ops::cpu::chosen_cpu_isa())]; }

std::string cycle_fixture_path(const std::string& name) {
  return std::string(FIELDBRAIN_SOURCE_DIR) + "/test/fixtures/cycle/" + fieldbrain_kernels() +
         "/" + name + ".txt";
}

// "key hex" lines, in key order.
std::map<std::string, std::string> read_digests(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, std::string> out;
  std::string key, value;
  while (in >> key >> value) out[key] = value;
  return out;
}

void write_digests(const std::string& path, const std::map<std::string, std::string>& digests) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path);
  REQUIRE(out.good());
  for (const auto& [key, value] : digests) out << key << ' ' << value << '\n';
}

std::map<std::string, std::string> cycle_digests(const std::string& field_step, int64_t B,
                                                 int64_t R) {
  BrainConfig c;
  c.resolution = R;
  c.sensory_dim = 12;
  c.motor_dim = 4;
  c.attractor_capacity = 4;
  c.seed = 7;
  c.field_step = field_step;
  std::vector<uint64_t> keys;
  for (int64_t b = 0; b < B; ++b) keys.push_back(static_cast<uint64_t>(5 + 2 * b));
  auto brain = make_brain(c, keys);
  std::map<std::string, std::string> digests;
  std::vector<torch::Tensor> block;
  for (int n = 0; n < kCycles; ++n) {
    block.push_back(brain->step(fixture_sensors(n, B, c.sensory_dim), fixture_reward(n, B)));
    if (block.size() == kBlock) {
      digests[fmt::format("motors.{:03d}", n + 1 - kBlock)] =
          fmt::format("{:016x}", fixture_fnv1a64(torch::stack(block)));
      block.clear();
    }
  }
  for (const auto& [name, value] : snapshot(*brain)) {
    digests["buffer." + name] = fmt::format("{:016x}", fixture_fnv1a64(value));
  }
  return digests;
}

// What else decides the bits: one word, no spaces.
std::string platform_stamp() {
  std::string compiler = __VERSION__;
  for (char& ch : compiler) {
    if (ch == ' ') ch = '_';
  }
  return fmt::format("libtorch-{}_gcc-{}_glibc-{}_isa-{}_aten-{}", TORCH_VERSION, compiler,
                     gnu_get_libc_version(), fieldbrain_kernels(), aten_cpu_kernels());
}

void check_against_fixture(const std::string& field_step, int64_t B, int64_t R = 16) {
  // One thread: a reduction's rounding may depend on how the work is split.
  const int threads_before = at::get_num_threads();
  at::set_num_threads(1);
  auto digests = cycle_digests(field_step, B, R);
  at::set_num_threads(threads_before);
  digests["platform"] = platform_stamp();
  const std::string path = cycle_fixture_path(fmt::format("{}_R{}_B{}", field_step, R, B));
  const char* write = std::getenv("FIELDBRAIN_WRITE_FIXTURE");
  if (write != nullptr && std::string(write) == "1") {
    write_digests(path, digests);
    WARN("wrote " << path);
    return;
  }
  std::cout << "cycle fixture " << path << " on " << digests.at("platform") << std::endl;
  if (!std::filesystem::exists(path)) {
    FIELDBRAIN_SKIP("no cycle fixture for fieldbrain's " << fieldbrain_kernels() << " kernels ("
                    << path << "; test/fixtures/cycle/README.md says how to record one)");
  }
  const auto stored = read_digests(path);
  if (stored.count("platform") && stored.at("platform") != digests.at("platform")) {
    FIELDBRAIN_SKIP(path << " was pinned on " << stored.at("platform") << ", this is "
                    << digests.at("platform")
                    << " (FIELDBRAIN_WRITE_FIXTURE=1 pins it here before a refactoring)");
  }
  INFO("fixture " << path);
  REQUIRE(stored.size() > kCycles / kBlock);  // the motors' blocks and the buffers
  for (const auto& [key, value] : stored) {
    INFO(key);
    const auto it = digests.find(key);
    REQUIRE(it != digests.end());
    CHECK(it->second == value);
  }
  CHECK(digests.size() == stored.size());
}

}  // namespace

// The kernels that pick the fixture set and stamp follow the variables that force lower ones:
// without this, a forced run could compare with the wrong set, or skip unnoticed.
TEST_CASE("the cycle fixtures' CPU kernels follow FIELDBRAIN_ISA and ATEN_CPU_CAPABILITY",
          "[brain][fixture]") {
  std::cout << "CPU kernels: fieldbrain " << fieldbrain_kernels() << ", ATen "
            << aten_cpu_kernels() << " (" << aten_cpu_capability() << ")" << std::endl;
  std::vector<std::string> runnable;
  for (auto isa : ops::cpu::runnable_cpu_isas()) {
    runnable.push_back(kIsaNames[static_cast<int>(isa)]);
  }
  const auto runs = [&](const std::string& isa) {
    return std::find(runnable.begin(), runnable.end(), isa) != runnable.end();
  };
  const char* ours = std::getenv("FIELDBRAIN_ISA");
  if (ours != nullptr && runs(ours)) {
    CHECK(fieldbrain_kernels() == ours);  // forced, and this CPU runs it
  } else if (ours == nullptr) {
    CHECK(fieldbrain_kernels() == runnable.back());  // the widest this CPU runs
  } else {
    CHECK(fieldbrain_kernels() != ours);  // a variant this CPU cannot run is not chosen
  }
  const char* aten = std::getenv("ATEN_CPU_CAPABILITY");
  if (aten != nullptr && (std::string(aten) == "default" || runs(aten))) {
    CHECK(aten_cpu_kernels() == aten);
  } else {
    CHECK((aten_cpu_kernels() == "default" || runs(aten_cpu_kernels())));
  }
}

TEST_CASE("200 reference cycles of one robot are bit-identical to the stored fixture",
          "[brain][fixture]") {
  check_against_fixture("reference", 1);
}

TEST_CASE("200 reference cycles of four robots are bit-identical to the stored fixture",
          "[brain][fixture]") {
  check_against_fixture("reference", 4);
}

TEST_CASE("200 fast cycles of one robot are bit-identical to the stored fixture",
          "[brain][fixture]") {
  check_against_fixture("fast", 1);
}

TEST_CASE("200 fast cycles of four robots are bit-identical to the stored fixture",
          "[brain][fixture]") {
  check_against_fixture("fast", 4);
}

// R = 20: every row of the fused passes ends in a partial vector (4 of 16 or of 8 lanes), read
// and written with masked loads and stores (brain/ops/cpu/vector_pieces.h). Pinned with the
// tails the passes took before those (at::vec's partial loadu and store, through a buffer).
TEST_CASE(
    "200 fast cycles of one robot at a resolution with vector tails are bit-identical to "
    "the stored fixture",
    "[brain][fixture]") {
  check_against_fixture("fast", 1, 20);
}

}  // namespace fieldbrain::test
