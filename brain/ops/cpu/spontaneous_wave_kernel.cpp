// CPU kernel of fieldbrain::spontaneous_wave_out: at::parallel_for over (robot, x plane); each
// task builds the robot's per-axis sine tables (spontaneous_wave_math.h) on the stack and
// writes its plane row by row. Allocates nothing.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>

#include "brain/ops/cpu/kernels.h"
#include "brain/ops/spontaneous_wave_math.h"

namespace fieldbrain {
namespace ops {
namespace cpu {

void run(const SpontaneousWaveArgs& args) {
  const int64_t B = args.batch, R = args.resolution;
  if (B == 0 || R == 0) return;
  const float* wv = args.wave_vectors;
  const float* mask = args.wave_mask;
  const float* ph = args.phase;
  const int64_t ph_stride = args.phase_stride;
  float* out = args.wave;
  const int r = static_cast<int>(R);
  // Planes are cheap (R^2 multiply-adds per wave): a grain of several planes per task.
  const int64_t grain = std::max<int64_t>(1, 4096 / (R * R));
  at::parallel_for(0, B * R, grain, [&](int64_t begin, int64_t end) {
    // 6 kMaxWaves R floats of tables: on the stack up to R = 1024 (120 KiB).
    constexpr int kMaxR = 1024;
    float tables[6 * wave::kMaxWaves * kMaxR];
    int64_t robot = -1;
    int n = 0;
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / R;
      const int x = static_cast<int>(t % R);
      if (b != robot) {
        n = wave::wave_axis_tables(wv + b * wave::kMaxWaves * 3, mask + b * wave::kMaxWaves,
                                   ph[b * ph_stride], r, tables);
        robot = b;
      }
      float* plane = out + (b * R + x) * R * R;
      for (int y = 0; y < r; ++y) wave::wave_row(tables, n, r, x, y, plane + y * R);
    }
  });
}

}  // namespace cpu
}  // namespace ops
}  // namespace fieldbrain
