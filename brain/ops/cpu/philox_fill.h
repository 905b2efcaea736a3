// Vectorised fills of the Philox streams of brain/ops/philox.h (the same numbers as the header's
// scalar functions, bit for bit). philox_fill.cpp is compiled once per instruction set next to
// the field-step passes (namespaces isa_default, isa_avx2, isa_avx512), with -ffp-contract=off
// so that the compiler vectorises the header's float code without fusing it into FMAs.
#pragma once

#include <cstdint>

namespace fieldbrain {
namespace ops {
namespace cpu {

// out[i] = philox::normal(seed, cycle, stream, start + i) for i in [0, n).
using FillNormalsFn = void (*)(uint64_t seed, uint64_t cycle, uint32_t stream, uint64_t start,
                               int64_t n, float* out);

namespace isa_default {
void fill_normals(uint64_t seed, uint64_t cycle, uint32_t stream, uint64_t start, int64_t n, float* out);
}
namespace isa_avx2 {
void fill_normals(uint64_t seed, uint64_t cycle, uint32_t stream, uint64_t start, int64_t n, float* out);
}
namespace isa_avx512 {
void fill_normals(uint64_t seed, uint64_t cycle, uint32_t stream, uint64_t start, int64_t n, float* out);
}

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
