// The per-channel pass of the fused CPU read-out (brain/ops/field_readout.h), a plain function
// over raw float arrays. field_readout_passes.cpp is compiled once per instruction set next to
// the field step's passes (same namespaces); cpu/field_readout_kernel.cpp picks one at run time
// and owns threading and the per-robot finish, so nothing here allocates or starts threads.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fieldbrain {
namespace ops {
namespace cpu {

struct FieldReadoutPasses {
  const char* isa;
  // Floats of scratch readout_channel needs.
  size_t (*channel_scratch_floats)(int64_t resolution);
  // Reads one channel ch [R,R,R] once and writes its part of the robot's output row `row`
  // (field_readout_layout.h): the 64 cell means and |.| means, the channel's mean, |.| mean,
  // square mean, max |.| and six face means.
  void (*readout_channel)(const float* ch, int64_t resolution, int64_t channel, float* row,
                          float* scratch);
};

// Defined by field_readout_passes.cpp, compiled per instruction set.
namespace isa_default {
extern const FieldReadoutPasses kReadoutPasses;
}
namespace isa_avx2 {
extern const FieldReadoutPasses kReadoutPasses;
}
namespace isa_avx512 {
extern const FieldReadoutPasses kReadoutPasses;
}

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
