// The seed of a randomised test: fresh each run (so repeated runs explore), printed so that a
// failure can be rerun at the same draws with FIELDBRAIN_TEST_SEED=<seed>.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace fieldbrain::test {

inline uint64_t test_seed(const char* what) {
  const char* env = std::getenv("FIELDBRAIN_TEST_SEED");
  const uint64_t seed = env != nullptr ? std::stoull(env) : std::random_device{}();
  std::printf("%s: seed %llu (FIELDBRAIN_TEST_SEED=%llu repeats it)\n", what,
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  std::fflush(stdout);
  return seed;
}

}  // namespace fieldbrain::test
