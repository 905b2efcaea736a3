// numpy's legacy global generator (numpy.random.RandomState, numpy 1.24), as the original field
// brain uses it: np.random.seed(s) then np.random.randint(3, 6) once, in
// EvolvedFieldDynamics._initialize_wave_vectors (n_waves). No other numpy draw happens during
// construction or a cycle of the pinned original (test/fixtures/legacy/README.md, "Notes for the port" 1 and 3).
//
// Exact reproduction, checked against numpy for 1,000 seeds (test/legacy/numpy_random_test.cpp):
// - seed(uint32): np.random.seed(int) -> numpy's mt19937_seed, i.e. MT19937's init_genrand
//   (key[0] = s, key[i] = 1812433253 * (key[i-1] ^ key[i-1] >> 30) + i). numpy uses
//   init_by_array only when the seed is an array (np.random.seed([s])), a different stream.
// - next_uint32(): MT19937 genrand_int32 (the reference tempering).
// - randint(low, high): the legacy path (RandomState.randint, dtype int64): rng = high - low - 1,
//   mask = the smallest 2^k - 1 >= rng; draw (32-bit words while rng <= 0xFFFFFFFF, else 64-bit
//   words made of two 32-bit words, high first), AND the mask, reject while > rng; low + value.
// - random_sample(): legacy double, (a >> 5) * 2^26 + (b >> 6), / 2^53.
#pragma once

#include <array>
#include <cstdint>

namespace fieldbrain::legacy {

class NumpyRandomState {
 public:
  static constexpr int kStateLength = 624;

  NumpyRandomState() { seed(0); }
  explicit NumpyRandomState(uint32_t s) { seed(s); }

  // np.random.seed(s) with an integer s in [0, 2^32).
  void seed(uint32_t s);
  uint32_t next_uint32();
  uint64_t next_uint64();  // numpy's mt19937_next64: (next32 << 32) | next32
  // np.random.randint(low, high) (one int64 in [low, high)); throws std::invalid_argument when
  // low >= high, as numpy raises ValueError.
  int64_t randint(int64_t low, int64_t high);
  // np.random.random_sample() / np.random.rand(): a double in [0, 1).
  double random_sample();

  // The state as numpy's get_state()[1:3] holds it (key, pos), for saving and loading.
  // set_state throws std::invalid_argument when pos is outside [0, 624].
  const std::array<uint32_t, kStateLength>& key() const { return key_; }
  int pos() const { return pos_; }
  void set_state(const std::array<uint32_t, kStateLength>& key, int pos);

 private:
  void generate();
  std::array<uint32_t, kStateLength> key_{};
  int pos_ = kStateLength;
};

}  // namespace fieldbrain::legacy
