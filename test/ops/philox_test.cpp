// The brain's random numbers (brain/ops/philox.h, docs/cycle.md "Randomness"): Philox4x32-10
// against the published known answers, the normals' distribution, and the same bits from every
// implementation: the scalar header, each vectorised CPU fill, the philox_normal_out operator,
// the noise made inside field_step_seeded, the Python reference and CUDA.
#include "test/support/catch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "brain/field_brain.h"
#include "brain/ops/cpu/field_step_passes.h"
#include "brain/ops/field_step.h"
#include "brain/ops/field_step_inputs.h"
#include "brain/ops/philox.h"
#include "test/support/devices.h"

namespace {

using fieldbrain::philox::Words;

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

torch::Tensor key_of(std::vector<std::pair<uint64_t, uint64_t>> robots) {
  auto key = torch::empty({static_cast<int64_t>(robots.size()), 2}, torch::kLong);
  for (size_t b = 0; b < robots.size(); ++b) {
    key[b][0] = static_cast<int64_t>(robots[b].first);
    key[b][1] = static_cast<int64_t>(robots[b].second);
  }
  return key;
}

// Standard normal CDF.
double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Output lines of a command.
std::vector<std::string> lines_of(const std::string& cmd) {
  std::vector<std::string> out;
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[64];
  while (fgets(buf, sizeof buf, pipe) != nullptr) {
    std::string line(buf);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    out.push_back(line);
  }
  REQUIRE(pclose(pipe) == 0);
  return out;
}

}  // namespace

TEST_CASE("Philox4x32-10 gives the published Random123 known answers", "[philox]") {
  // Random123's kat_vectors, lines "philox4x32 10 <ctr x4> <key x2> <expected x4>".
  struct Kat {
    Words ctr;
    uint32_t k0, k1;
    Words expected;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}},
       0xffffffff,
       0xffffffff,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}},
       0xa4093822,
       0x299f31d0,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const auto& kat : kats) {
    const Words got = fieldbrain::philox::philox4x32_10(kat.ctr, kat.k0, kat.k1);
    for (int i = 0; i < 4; ++i) {
      CAPTURE(i, kat.ctr.w[0]);
      CHECK(got.w[i] == kat.expected.w[i]);
    }
  }
}

TEST_CASE("Uniforms are exact odd multiples of 2^-24 strictly inside (0, 1)", "[philox]") {
  using fieldbrain::philox::uniform_of;
  CHECK(uniform_of(0u) == std::ldexp(1.0f, -24));
  CHECK(uniform_of(0xffffffffu) == 1.0f - std::ldexp(1.0f, -24));
  CHECK(uniform_of(0x80000000u) == 0.5f + std::ldexp(1.0f, -24));
  CHECK(uniform_of(0x1ffu) == uniform_of(0u));  // the low 9 bits are dropped
}

TEST_CASE("10^6 Philox normals have mean 0, variance 1 and a normal distribution",
          "[philox]") {
  const int64_t n = 1000000;
  auto z = torch::empty({1, n}, torch::kFloat);
  fieldbrain::ops::philox_normal_out(key_of({{0x1234567890ABCDEFULL, 77}}), 2, z);
  std::vector<double> v(z.data_ptr<float>(), z.data_ptr<float>() + n);
  double sum = 0, sq = 0;
  for (double x : v) sum += x;
  const double mean = sum / n;
  for (double x : v) sq += (x - mean) * (x - mean);
  const double var = sq / (n - 1);
  // Standard errors: mean 1/sqrt(n) = 1e-3, variance sqrt(2/n) = 1.41e-3; allow 5 of them
  // (a correct generator fails with probability < 1e-6 each).
  CHECK(std::fabs(mean) < 5e-3);
  CHECK(std::fabs(var - 1.0) < 5 * 1.414e-3);
  // Kolmogorov-Smirnov: D = sup |F_n(x) - Phi(x)|. Asymptotically P(sqrt(n) D > t) =
  // 2 sum_k (-1)^(k-1) exp(-2 k^2 t^2) ~ 2 exp(-2 t^2); for a false-failure probability of
  // 1e-6, t = sqrt(ln(2e6) / 2) = 2.69, so D < 2.69 / sqrt(n) = 2.69e-3. (The 2^-24
  // granularity of the uniforms and float32 rounding move the CDF by < 1e-6.)
  std::sort(v.begin(), v.end());
  double d = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double f = phi(v[i]);
    d = std::max({d, std::fabs(f - static_cast<double>(i) / n),
                  std::fabs(static_cast<double>(i + 1) / n - f)});
  }
  CAPTURE(mean, var, d);
  CHECK(d < 2.69e-3);
  // Box-Muller's largest possible value is sqrt(-2 ln 2^-24) = 5.77: a finite, bounded tail.
  CHECK(v.front() > -5.8);
  CHECK(v.back() < 5.8);
}

TEST_CASE("Every vectorised CPU fill gives the header's numbers bit for bit", "[philox]") {
  const uint64_t seed = 0x7FEDCBA987654321ULL, cycle = 0x100000005ULL;  // both 32-bit halves used
  const uint32_t stream = 2;
  for (const auto* passes : fieldbrain::ops::cpu::runnable_passes()) {
    // Starts and lengths off the block (4) and chunk (256) boundaries, and short runs.
    for (const auto& [start, n] : std::vector<std::pair<uint64_t, int64_t>>{
             {0, 1000}, {3, 1}, {1, 2}, {5, 700}, {4096 + 2, 257}, {0, 256}, {7, 0}}) {
      CAPTURE(passes->isa, start, n);
      std::vector<float> got(static_cast<size_t>(n) + 1, -99.f);
      passes->fill_normals(seed, cycle, stream, start, n, got.data());
      int64_t mismatches = 0;
      for (int64_t i = 0; i < n; ++i) {
        const float want = fieldbrain::philox::normal(seed, cycle, stream, start + i);
        if (bits_of(got[i]) != bits_of(want)) ++mismatches;
      }
      CHECK(mismatches == 0);
      CHECK(got[n] == -99.f);  // nothing written past the end
    }
  }
}

TEST_CASE("philox_normal_out fills each robot's stream from its (seed, cycle)", "[philox][ops]") {
  const auto key = key_of({{11, 0}, {11, 1}, {0xFFFFFFFFFFFFULL, 3}});
  auto out = torch::full({3, 5, 7, 3}, -1.f);  // 105 per robot: not a multiple of 4
  const void* before = out.data_ptr();
  fieldbrain::ops::philox_normal_out(key, 4, out);
  CHECK(out.data_ptr() == before);
  const auto flat = out.reshape({3, 105});
  int64_t mismatches = 0;
  for (int64_t b = 0; b < 3; ++b) {
    for (int64_t i = 0; i < 105; ++i) {
      const float want = fieldbrain::philox::normal(static_cast<uint64_t>(key[b][0].item<int64_t>()),
                                                    static_cast<uint64_t>(key[b][1].item<int64_t>()),
                                                    4, static_cast<uint64_t>(i));
      if (bits_of(flat[b][i].item<float>()) != bits_of(want)) ++mismatches;
    }
  }
  CHECK(mismatches == 0);
  // Another cycle or stream gives other numbers.
  CHECK_FALSE(torch::equal(flat[0], flat[1]));
  auto other = torch::empty_like(out);
  fieldbrain::ops::philox_normal_out(key, 3, other);
  CHECK_FALSE(torch::equal(other, out));
}

TEST_CASE("philox_normal_out refuses a bad key or output with the problem named",
          "[philox][ops]") {
  auto out = torch::empty({2, 8});
  CHECK_THROWS_WITH(fieldbrain::ops::philox_normal_out(torch::zeros({3, 2}, torch::kLong), 1, out),
                    Catch::Contains("noise_key must have shape [2,2]"));
  CHECK_THROWS_WITH(fieldbrain::ops::philox_normal_out(torch::zeros({2, 2}), 1, out),
                    Catch::Contains("noise_key must be int64"));
  auto doubles = torch::empty({2, 8}, torch::kDouble);
  CHECK_THROWS_WITH(fieldbrain::ops::philox_normal_out(torch::zeros({2, 2}, torch::kLong), 1, doubles),
                    Catch::Contains("contiguous float32"));
  CHECK_THROWS_WITH(fieldbrain::ops::philox_normal_out(torch::zeros({2, 2}, torch::kLong), -1, out),
                    Catch::Contains("not a 32-bit word"));
}

TEST_CASE("field_step_seeded equals field_step fed the filled noise stream", "[philox][ops]") {
  // Bit-identical: the kernel makes each noise value with the same fill as philox_normal_out.
  // R = 9: planes of 81 values start off Philox block boundaries. Fewer robots than threads:
  // each robot is cut into slabs, and the noise of the planes around each slab boundary is
  // made once before the slabs run (slabs of >= 4 planes) or by each slab that reads it.
  // 5 threads: up to 5 slabs per robot, and both ways.
  const int64_t R = GENERATE(9, 16);
  const int64_t B = GENERATE(1, 2);
  const int threads = GENERATE(0, 5);
  const int threads_before = at::get_num_threads();
  if (threads > 0) at::set_num_threads(threads);
  struct Restore {
    int n;
    ~Restore() { at::set_num_threads(n); }
  } restore{threads_before};
  CAPTURE(R, B, at::get_num_threads());
  const auto in = fieldbrain::ops::make_field_step_inputs(B, R, 900 + R, 1.0, -1);
  const auto key = key_of({{fieldbrain::robot_seed(42, 1), 5}, {fieldbrain::robot_seed(42, 2), 0x100000000ULL}})
                       .slice(0, 0, B);
  auto noise = torch::empty({B, 48, R, R, R});
  fieldbrain::ops::philox_normal_out(key, fieldbrain::philox::kStreamSpontaneous, noise);
  const auto want = fieldbrain::ops::field_step(in.field, noise, in.wave, in.ef, in.scalars);
  const auto got = fieldbrain::ops::field_step_seeded(in.field, key, in.wave, in.ef, in.scalars);
  CHECK(torch::equal(got, want));
  auto out = torch::empty_like(in.field);
  const void* before = out.data_ptr();
  fieldbrain::ops::field_step_seeded_out(in.field, key, in.wave, in.ef, in.scalars, out);
  CHECK(out.data_ptr() == before);
  CHECK(torch::equal(out, want));
  CHECK_THROWS_WITH(fieldbrain::ops::field_step_seeded(in.field, torch::zeros({B + 1, 2}, torch::kLong),
                                                       in.wave, in.ef, in.scalars),
                    Catch::Contains("noise_key must have shape"));
}

TEST_CASE("The Python reference's Philox gives the C++ numbers bit for bit", "[philox][parity]") {
  // scripts/reference/philox_ref.py implements docs/cycle.md with torch integer and float32
  // tensor ops; it prints each value's float32 bit pattern. Bit-identical is achieved (every
  // float operation is a single correctly rounded IEEE op in both), so the check is equality.
  const std::string script = std::string(FIELDBRAIN_PYTHON) + " " + FIELDBRAIN_SOURCE_DIR +
                             "/scripts/reference/philox_ref.py";
  const uint64_t seed = 8070450532247928832ULL, cycle = 4294967301ULL;
  const int64_t n = 20003;
  SECTION("normals") {
    const auto lines = lines_of(script + " dump " + std::to_string(seed) + " " +
                                std::to_string(cycle) + " 2 " + std::to_string(n));
    REQUIRE(static_cast<int64_t>(lines.size()) == n);
    int64_t mismatches = 0;
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t want = bits_of(fieldbrain::philox::normal(seed, cycle, 2, i));
      if (std::stoul(lines[i], nullptr, 16) != want) ++mismatches;
    }
    CHECK(mismatches == 0);
  }
  SECTION("uniforms") {
    const auto lines = lines_of(script + " dump-uniform 123 0 19 1001");
    REQUIRE(lines.size() == 1001);
    int64_t mismatches = 0;
    for (int64_t i = 0; i < 1001; ++i) {
      const uint32_t want = bits_of(fieldbrain::philox::uniform(123, 0, 19, i));
      if (std::stoul(lines[i], nullptr, 16) != want) ++mismatches;
    }
    CHECK(mismatches == 0);
  }
}

TEST_CASE("Philox noise on CUDA equals the CPU's", "[cuda][philox]") {
  if (!fieldbrain::test::cuda_or_skip("philox_normal_out and field_step_seeded CUDA vs CPU")) return;
  const torch::Device cuda("cuda");
  const auto key = key_of({{3, 9}, {0xABCDEF0123ULL, 0x100000002ULL}});
  SECTION("philox_normal_out: bit-identical") {
    auto cpu = torch::empty({2, 48, 9, 9, 9});
    fieldbrain::ops::philox_normal_out(key, 2, cpu);
    auto dev = torch::empty({2, 48, 9, 9, 9}, torch::TensorOptions().device(cuda));
    fieldbrain::ops::philox_normal_out(key.to(cuda), 2, dev);
    CHECK(torch::equal(dev.cpu(), cpu));
  }
  SECTION("field_step_seeded: the CUDA step within 1e-5 of the CPU step") {
    const int64_t R = 16;
    const auto in = fieldbrain::ops::make_field_step_inputs(2, R, 77, 1.0, -1);
    const auto want = fieldbrain::ops::field_step_seeded(in.field, key, in.wave, in.ef, in.scalars);
    const auto got = fieldbrain::ops::field_step_seeded(in.field.to(cuda), key.to(cuda), in.wave.to(cuda),
                                                        in.ef.to(cuda), in.scalars.to(cuda));
    CHECK((got.cpu() - want).abs().max().item<float>() <= 1e-5f);
  }
}
