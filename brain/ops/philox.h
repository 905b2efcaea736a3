// The brain's random numbers (docs/cycle.md "Randomness"): Philox4x32-10 (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC'11; the generator cuRAND and PyTorch's CUDA backend
// use), turned into uniforms and standard normals by a fixed sequence of float32 operations.
// Every number is a pure function of (robot seed, cycle, stream, element index): nothing here
// holds state, so a robot's randomness state is (seed, cycle) and any kernel can compute the
// element it consumes.
//
// Header-only, plain C++17 usable from host code and CUDA device code (FIELDBRAIN_HOST_DEVICE).
// The float part uses only +, -, *, / and sqrt, each correctly rounded in IEEE float32, in a
// documented order, so the CPU (scalar or vectorised), CUDA and the Python reference
// (scripts/reference/fieldbrain_ref.py) produce the same bits. That needs the compiler not to
// contract a*b+c into an FMA: device code uses the __f*_rn intrinsics, host code an empty asm
// barrier after every product (FIELDBRAIN_PHILOX_CONTRACT_OFF skips the barrier in a translation
// unit compiled with -ffp-contract=off, where the loops must stay vectorisable).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define FIELDBRAIN_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FIELDBRAIN_HOST_DEVICE inline
#endif

namespace fieldbrain {
namespace philox {

// Draw streams (the counter's word 1). Per cycle: counter words 2-3 are the robot's cycle
// number. Construction: cycle 0 (separate streams, so no collision with cycle 0's draws).
enum Stream : uint32_t {
  kStreamEmptyLocation = 1,  // eps_loc [R,R,R]       (docs/cycle.md step 4)
  kStreamSpontaneous = 2,    // eps_sp [48,R,R,R]     (step 7.2; made inside the field step)
  kStreamExtraMotors = 3,    // eps_m [max(M-4,0)]    (step 10)
  kStreamExploration = 4,    // eps_x [M]             (step 10)
  kStreamInitialField = 16,  // the initial field [64,R,R,R] (normals)
  kStreamWaveCount = 17,     // the number of wave vectors (word 0 of block 0)
  kStreamWaveVectors = 18,   // the wave vectors [5,3] (normals; the first n_waves rows used)
  kStreamHierarchy = 19,     // the hierarchical weights [4,16,S] (uniforms)
};

constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;   // round multipliers
constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;  // key schedule increments

struct Words {
  uint32_t w[4];
};

// One Philox4x32 round: two 32x32->64 products, their halves mixed with the other words and
// the round key.
FIELDBRAIN_HOST_DEVICE Words philox_round(const Words& c, uint32_t k0, uint32_t k1) {
  const uint64_t p0 = static_cast<uint64_t>(kMul0) * c.w[0];
  const uint64_t p1 = static_cast<uint64_t>(kMul1) * c.w[2];
  Words out;
  out.w[0] = static_cast<uint32_t>(p1 >> 32) ^ c.w[1] ^ k0;
  out.w[1] = static_cast<uint32_t>(p1);
  out.w[2] = static_cast<uint32_t>(p0 >> 32) ^ c.w[3] ^ k1;
  out.w[3] = static_cast<uint32_t>(p0);
  return out;
}

// Philox4x32-10: ten rounds, the key advanced by the Weyl increments before rounds 2..10.
FIELDBRAIN_HOST_DEVICE Words philox4x32_10(Words c, uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
    c = philox_round(c, k0, k1);
  }
  return c;
}

// ---- float32 helpers that are never contracted into FMAs ----
#if defined(__CUDA_ARCH__)
FIELDBRAIN_HOST_DEVICE float mul_rn(float a, float b) { return __fmul_rn(a, b); }
FIELDBRAIN_HOST_DEVICE float add_rn(float a, float b) { return __fadd_rn(a, b); }
FIELDBRAIN_HOST_DEVICE float sub_rn(float a, float b) { return __fsub_rn(a, b); }
FIELDBRAIN_HOST_DEVICE float div_rn(float a, float b) { return __fdiv_rn(a, b); }
FIELDBRAIN_HOST_DEVICE float sqrt_rn(float a) { return __fsqrt_rn(a); }
FIELDBRAIN_HOST_DEVICE float bits_to_float(uint32_t u) { return __uint_as_float(u); }
FIELDBRAIN_HOST_DEVICE uint32_t float_to_bits(float f) { return __float_as_uint(f); }
#else
// An empty asm the product must pass through: the compiler cannot fuse it with the add that
// follows.
inline float opaque(float v) {
#if !defined(FIELDBRAIN_PHILOX_CONTRACT_OFF) && defined(__GNUC__) && \
    (defined(__x86_64__) || defined(__i386__))
  __asm__("" : "+x"(v));
#elif !defined(FIELDBRAIN_PHILOX_CONTRACT_OFF) && defined(__GNUC__) && defined(__aarch64__)
  __asm__("" : "+w"(v));
#endif
  return v;
}
inline float mul_rn(float a, float b) { return opaque(a * b); }
inline float add_rn(float a, float b) { return a + b; }
inline float sub_rn(float a, float b) { return a - b; }
inline float div_rn(float a, float b) { return a / b; }
inline float sqrt_rn(float a) { return __builtin_sqrtf(a); }
inline float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
inline uint32_t float_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
#endif

// The constants of the transform: double expressions rounded once to float32 (the Python
// reference rounds the same doubles).
namespace k {
constexpr float kTwoPow24Inv = 5.9604644775390625e-08f;  // 2^-24, exact
constexpr float kTwoPow22Inv = 2.384185791015625e-07f;   // 2^-22, exact
constexpr float kSqrt2 = static_cast<float>(1.4142135623730951);
constexpr float kLn2 = static_cast<float>(0.6931471805599453);
constexpr float kHalfPi = static_cast<float>(1.5707963267948966);
constexpr float kSqrtHalf = static_cast<float>(0.7071067811865476);
// Polynomial coefficients, highest power first (scalars: constexpr arrays are not visible
// in CUDA device code).
constexpr float kLog0 = static_cast<float>(2.0 / 9.0), kLog1 = static_cast<float>(2.0 / 7.0),
                kLog2 = static_cast<float>(2.0 / 5.0), kLog3 = static_cast<float>(2.0 / 3.0),
                kLog4 = 2.0f;
constexpr float kSin0 = static_cast<float>(1.0 / 362880.0), kSin1 = static_cast<float>(-1.0 / 5040.0),
                kSin2 = static_cast<float>(1.0 / 120.0), kSin3 = static_cast<float>(-1.0 / 6.0),
                kSin4 = 1.0f;
constexpr float kCos0 = static_cast<float>(-1.0 / 3628800.0),
                kCos1 = static_cast<float>(1.0 / 40320.0), kCos2 = static_cast<float>(-1.0 / 720.0),
                kCos3 = static_cast<float>(1.0 / 24.0), kCos4 = -0.5f, kCos5 = 1.0f;
}  // namespace k

// A word -> a uniform in (0, 1): (2 (x >> 9) + 1) * 2^-24, exact in float32, never 0 or 1.
FIELDBRAIN_HOST_DEVICE float uniform_of(uint32_t x) {
  return static_cast<float>(static_cast<int32_t>(((x >> 9) << 1) | 1u)) * k::kTwoPow24Inv;
}

// Box-Muller of two words: r = sqrt(-2 ln u0), theta = 2 pi u1, (r cos theta, r sin theta).
//  ln u0: u0 = 2^e f with f in [1, 2); if f > sqrt 2 then f /= 2, e += 1; s = (f-1)/(f+1);
//         ln f = s (2 + s^2 (2/3 + s^2 (2/5 + s^2 (2/7 + s^2 2/9)))) (Horner);
//         ln u0 = e ln2 + ln f.
//  theta: with k = x1 >> 9, the quadrant q = k >> 21 and g = ((2k+1) - q 2^22 - 2^21) 2^-22 in
//         [-1/2, 1/2) (exact), theta = q pi/2 + pi/4 + phi with phi = g pi/2; sin/cos phi by
//         Taylor polynomials to phi^9 / phi^10 (Horner in phi^2); then
//         cos(pi/4 + phi) = (cos phi - sin phi) sqrt(1/2), sin(pi/4 + phi) = (cos phi + sin phi) sqrt(1/2),
//         rotated by q quarter turns.
FIELDBRAIN_HOST_DEVICE void box_muller(uint32_t x0, uint32_t x1, float& z0, float& z1) {
  // Branch-free (selects as bit masks) so that a loop over it vectorises.
  const uint32_t ubits = float_to_bits(uniform_of(x0));
  uint32_t mbits = (ubits & 0x7FFFFFu) | 0x3F800000u;  // f in [1, 2)
  const uint32_t high = mbits > float_to_bits(k::kSqrt2) ? 1u : 0u;
  mbits -= high << 23;  // f / 2, exact
  const int32_t e = static_cast<int32_t>(ubits >> 23) - 127 + static_cast<int32_t>(high);
  const float f = bits_to_float(mbits);
  const float s = div_rn(sub_rn(f, 1.0f), add_rn(f, 1.0f));
  const float s2 = mul_rn(s, s);
  float p = k::kLog0;
  p = add_rn(mul_rn(p, s2), k::kLog1);
  p = add_rn(mul_rn(p, s2), k::kLog2);
  p = add_rn(mul_rn(p, s2), k::kLog3);
  p = add_rn(mul_rn(p, s2), k::kLog4);
  const float ln = add_rn(mul_rn(static_cast<float>(e), k::kLn2), mul_rn(s, p));
  const float r = sqrt_rn(mul_rn(ln, -2.0f));

  const int32_t kk = static_cast<int32_t>(x1 >> 9);
  const int32_t q = kk >> 21;
  const float g = static_cast<float>(((kk << 1) | 1) - (q << 22) - (1 << 21)) * k::kTwoPow22Inv;
  const float phi = mul_rn(g, k::kHalfPi);
  const float p2 = mul_rn(phi, phi);
  float sp = k::kSin0;
  sp = add_rn(mul_rn(sp, p2), k::kSin1);
  sp = add_rn(mul_rn(sp, p2), k::kSin2);
  sp = add_rn(mul_rn(sp, p2), k::kSin3);
  sp = add_rn(mul_rn(sp, p2), k::kSin4);
  float cp = k::kCos0;
  cp = add_rn(mul_rn(cp, p2), k::kCos1);
  cp = add_rn(mul_rn(cp, p2), k::kCos2);
  cp = add_rn(mul_rn(cp, p2), k::kCos3);
  cp = add_rn(mul_rn(cp, p2), k::kCos4);
  cp = add_rn(mul_rn(cp, p2), k::kCos5);
  const float sin_phi = mul_rn(phi, sp);
  const uint32_t ca = float_to_bits(mul_rn(sub_rn(cp, sin_phi), k::kSqrtHalf));
  const uint32_t sa = float_to_bits(mul_rn(add_rn(cp, sin_phi), k::kSqrtHalf));
  // q = 0: (ca, sa); 1: (-sa, ca); 2: (-ca, -sa); 3: (sa, -ca)
  const uint32_t uq = static_cast<uint32_t>(q);
  const uint32_t swap = 0u - (uq & 1u);
  const uint32_t c = (ca & ~swap) | (sa & swap);
  const uint32_t sn = (sa & ~swap) | (ca & swap);
  const uint32_t flip_c = ((uq ^ (uq >> 1)) & 1u) << 31;  // q = 1 or 2
  const uint32_t flip_s = (uq >> 1) << 31;                 // q = 2 or 3
  z0 = mul_rn(r, bits_to_float(c ^ flip_c));
  z1 = mul_rn(r, bits_to_float(sn ^ flip_s));
}

// The Philox block of (seed, cycle, stream, block index): key (seed lo, seed hi), counter
// (block, stream, cycle lo, cycle hi).
FIELDBRAIN_HOST_DEVICE Words block_words(uint64_t seed, uint64_t cycle, uint32_t stream,
                                         uint32_t block) {
  Words c;
  c.w[0] = block;
  c.w[1] = stream;
  c.w[2] = static_cast<uint32_t>(cycle);
  c.w[3] = static_cast<uint32_t>(cycle >> 32);
  return philox4x32_10(c, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// The four normals of one block: elements 4*block .. 4*block+3 of the stream. Lanes 0,1 are
// Box-Muller of words (0,1), lanes 2,3 of words (2,3).
FIELDBRAIN_HOST_DEVICE void normal4(uint64_t seed, uint64_t cycle, uint32_t stream, uint32_t block,
                                    float out[4]) {
  const Words w = block_words(seed, cycle, stream, block);
  box_muller(w.w[0], w.w[1], out[0], out[1]);
  box_muller(w.w[2], w.w[3], out[2], out[3]);
}

// Element `index` of a stream of standard normals (index < 2^34).
FIELDBRAIN_HOST_DEVICE float normal(uint64_t seed, uint64_t cycle, uint32_t stream, uint64_t index) {
  float out[4];
  normal4(seed, cycle, stream, static_cast<uint32_t>(index >> 2), out);
  return out[index & 3];
}

// Element `index` of a stream of uniforms in (0, 1): uniform_of(word index % 4 of block index / 4).
FIELDBRAIN_HOST_DEVICE float uniform(uint64_t seed, uint64_t cycle, uint32_t stream, uint64_t index) {
  const Words w = block_words(seed, cycle, stream, static_cast<uint32_t>(index >> 2));
  return uniform_of(w.w[index & 3]);
}

}  // namespace philox

namespace ops {

// One call of fieldbrain::philox_normal_out as its kernels take it (brain/ops/field_step.h):
// element i of robot b's row of `per_robot` floats = normal(key[2b], key[2b+1], stream, i).
struct PhiloxNormalArgs {
  const int64_t* key = nullptr;  // [B,2] contiguous
  uint32_t stream = 0;
  int64_t batch = 0, per_robot = 0;
  float* out = nullptr;          // [B, per_robot]
};

}  // namespace ops
}  // namespace fieldbrain
