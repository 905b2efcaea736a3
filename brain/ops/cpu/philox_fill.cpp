// Vectorised Philox normals (see philox_fill.h). The header's functions are applied lane by
// lane over chunks of kBlocks counter values: every loop below has a fixed trip count and no
// branch, so GCC vectorises it (32x32->64 products as vpmuludq, the selects of the Box-Muller
// as blends); -ffp-contract=off keeps the float operations exactly those of the header.
#define FIELDBRAIN_PHILOX_CONTRACT_OFF 1
#include "brain/ops/cpu/philox_fill.h"

#include "brain/ops/philox.h"

#ifndef FIELDBRAIN_ISA_NAMESPACE
#error "compile with -DFIELDBRAIN_ISA_NAMESPACE=isa_<name>"
#endif

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace FIELDBRAIN_ISA_NAMESPACE {
namespace {

constexpr int kBlocks = 64;  // Philox blocks per chunk: 256 normals

// The 64 normals of blocks [first, first + kBlocks), in element order.
void chunk(uint32_t k0, uint32_t k1, uint32_t stream, uint32_t clo, uint32_t chi, uint32_t first,
           float* out) {
  alignas(64) uint32_t c0[kBlocks], c1[kBlocks], c2[kBlocks], c3[kBlocks];
  for (int i = 0; i < kBlocks; ++i) {
    c0[i] = first + static_cast<uint32_t>(i);
    c1[i] = stream;
    c2[i] = clo;
    c3[i] = chi;
  }
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
