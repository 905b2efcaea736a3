// Vectorised Philox normals (see philox_fill.h). The header's functions are applied lane by
// lane over chunks of kBlocks counter values: every loop below has a fixed trip count and no
// branch, so GCC vectorises it (32x32->64 products as vpmuludq, the selects of the Box-Muller
// as blends); -ffp-contract=off keeps the float operations exactly those of the header.
#define FIELDBRAIN_PHILOX_CONTRACT_OFF 1
#include "brain/ops/cpu/philox_fill.h"

#include "brain/ops/philox.h"

#if defined(CPU_CAPABILITY_AVX512) || defined(CPU_CAPABILITY_AVX2)
#include <immintrin.h>
#endif

#ifndef FIELDBRAIN_ISA_NAMESPACE
#error "compile with -DFIELDBRAIN_ISA_NAMESPACE=isa_<name>"
#endif

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace FIELDBRAIN_ISA_NAMESPACE {
namespace {

constexpr int kBlocks = 64;  // Philox blocks per chunk: 256 normals

// The ten rounds over kBlocks counters in place. GCC vectorises the portable loop's 32x32->64
// products as 64-bit multiplies; the AVX2/AVX-512 versions use vpmuludq on the even and odd
// 32-bit lanes instead (about twice as fast): hi/lo halves are blended back into 32-bit lanes.
#if defined(CPU_CAPABILITY_AVX512)
// AVX-512: the even and odd 32-bit lanes of 16 counters are run as two vectors of eight
// 64-bit lanes whose low halves hold the words. vpmuludq reads only the low halves, and the
// xors of a round act lane-wise, so what the high halves hold never reaches a low half: a
// round is then one multiply, one shift and one three-way xor (vpternlog) per product, with
// no blends; the halves are put back together once, after the ten rounds.
void philox_rounds(uint32_t* c0, uint32_t* c1, uint32_t* c2, uint32_t* c3, uint32_t k0, uint32_t k1) {
  const __m512i m0 = _mm512_set1_epi64(philox::kMul0);
  const __m512i m1 = _mm512_set1_epi64(philox::kMul1);
  for (int i = 0; i < kBlocks; i += 16) {
    __m512i w[4];
    w[0] = _mm512_load_si512(c0 + i);
    w[1] = _mm512_load_si512(c1 + i);
    w[2] = _mm512_load_si512(c2 + i);
    w[3] = _mm512_load_si512(c3 + i);
    __m512i x[2][4];  // [even/odd][word]
    for (int j = 0; j < 4; ++j) {
      x[0][j] = w[j];
      x[1][j] = _mm512_srli_epi64(w[j], 32);
    }
    uint32_t a = k0, b = k1;
    for (int r = 0; r < 10; ++r) {
      if (r > 0) {
        a += philox::kWeyl0;
        b += philox::kWeyl1;
      }
      const __m512i ka = _mm512_set1_epi64(a), kb = _mm512_set1_epi64(b);
      for (int h = 0; h < 2; ++h) {
        const __m512i p0 = _mm512_mul_epu32(x[h][0], m0);
        const __m512i p1 = _mm512_mul_epu32(x[h][2], m1);
        x[h][0] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p1, 32), x[h][1], ka, 0x96);
        x[h][1] = p1;
        x[h][2] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0, 32), x[h][3], kb, 0x96);
        x[h][3] = p0;
      }
    }
    for (int j = 0; j < 4; ++j) {
      w[j] = _mm512_mask_blend_epi32(0xAAAA, x[0][j], _mm512_slli_epi64(x[1][j], 32));
    }
    _mm512_store_si512(c0 + i, w[0]);
    _mm512_store_si512(c1 + i, w[1]);
    _mm512_store_si512(c2 + i, w[2]);
    _mm512_store_si512(c3 + i, w[3]);
  }
}
#elif defined(CPU_CAPABILITY_AVX2)
inline void mulhilo(__m256i a, __m256i m, __m256i& hi, __m256i& lo) {
  const __m256i even = _mm256_mul_epu32(a, m);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}
void philox_rounds(uint32_t* c0, uint32_t* c1, uint32_t* c2, uint32_t* c3, uint32_t k0, uint32_t k1) {
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(philox::kMul0));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(philox::kMul1));
  for (int i = 0; i < kBlocks; i += 8) {
    auto load = [](const uint32_t* p) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(p)); };
    __m256i x0 = load(c0 + i), x1 = load(c1 + i), x2 = load(c2 + i), x3 = load(c3 + i);
    uint32_t a = k0, b = k1;
    for (int r = 0; r < 10; ++r) {
      if (r > 0) {
        a += philox::kWeyl0;
        b += philox::kWeyl1;
      }
      __m256i hi0, lo0, hi1, lo1;
      mulhilo(x0, m0, hi0, lo0);
      mulhilo(x2, m1, hi1, lo1);
      x0 = _mm256_xor_si256(_mm256_xor_si256(hi1, x1), _mm256_set1_epi32(static_cast<int>(a)));
      x1 = lo1;
      x2 = _mm256_xor_si256(_mm256_xor_si256(hi0, x3), _mm256_set1_epi32(static_cast<int>(b)));
      x3 = lo0;
    }
    auto store = [](uint32_t* p, __m256i v) { _mm256_store_si256(reinterpret_cast<__m256i*>(p), v); };
    store(c0 + i, x0);
    store(c1 + i, x1);
    store(c2 + i, x2);
    store(c3 + i, x3);
  }
}
#else
void philox_rounds(uint32_t* c0, uint32_t* c1, uint32_t* c2, uint32_t* c3, uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += philox::kWeyl0;
      k1 += philox::kWeyl1;
    }
#pragma omp simd
    for (int i = 0; i < kBlocks; ++i) {
      const uint64_t p0 = static_cast<uint64_t>(philox::kMul0) * c0[i];
      const uint64_t p1 = static_cast<uint64_t>(philox::kMul1) * c2[i];
      const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1[i] ^ k0;
      const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3[i] ^ k1;
      c1[i] = static_cast<uint32_t>(p1);
      c3[i] = static_cast<uint32_t>(p0);
      c0[i] = n0;
      c2[i] = n2;
    }
  }
}
#endif

// The 4 kBlocks normals of blocks [first, first + kBlocks), in element order.
void chunk(uint32_t k0, uint32_t k1, uint32_t stream, uint32_t clo, uint32_t chi, uint32_t first,
           float* out) {
  alignas(64) uint32_t c0[kBlocks], c1[kBlocks], c2[kBlocks], c3[kBlocks];
  for (int i = 0; i < kBlocks; ++i) {
    c0[i] = first + static_cast<uint32_t>(i);
    c1[i] = stream;
    c2[i] = clo;
    c3[i] = chi;
  }
  philox_rounds(c0, c1, c2, c3, k0, k1);
  alignas(64) float z0[2 * kBlocks], z1[2 * kBlocks];
#pragma omp simd
  for (int i = 0; i < kBlocks; ++i) philox::box_muller(c0[i], c1[i], z0[i], z1[i]);
#pragma omp simd
  for (int i = 0; i < kBlocks; ++i) {
    philox::box_muller(c2[i], c3[i], z0[kBlocks + i], z1[kBlocks + i]);
  }
  for (int i = 0; i < kBlocks; ++i) {
    out[4 * i + 0] = z0[i];
    out[4 * i + 1] = z1[i];
    out[4 * i + 2] = z0[kBlocks + i];
    out[4 * i + 3] = z1[kBlocks + i];
  }
}

}  // namespace

void fill_normals(uint64_t seed, uint64_t cycle, uint32_t stream, uint64_t start, int64_t n,
                  float* out) {
  const uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  const uint32_t clo = static_cast<uint32_t>(cycle), chi = static_cast<uint32_t>(cycle >> 32);
  uint64_t i = start;
  const uint64_t end = start + static_cast<uint64_t>(n);
  float four[4];
  // Head: up to the next block boundary.
  while (i < end && (i & 3) != 0) {
    philox::normal4(seed, cycle, stream, static_cast<uint32_t>(i >> 2), four);
    for (; i < end && (i & 3) != 0; ++i) out[i - start] = four[i & 3];
  }
  // Whole chunks straight into out, then the remaining blocks through a chunk buffer.
  alignas(64) float buf[4 * kBlocks];
  while (i < end) {
    const uint32_t block = static_cast<uint32_t>(i >> 2);
    if (end - i >= 4 * kBlocks) {
      chunk(k0, k1, stream, clo, chi, block, out + (i - start));
      i += 4 * kBlocks;
    } else {
      chunk(k0, k1, stream, clo, chi, block, buf);
      for (int j = 0; i < end; ++i, ++j) out[i - start] = buf[j];
    }
  }
}

}  // namespace FIELDBRAIN_ISA_NAMESPACE
}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
