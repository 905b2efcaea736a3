// CPU kernel of fieldbrain::field_step_out / field_step_seeded_out: the choice of the
// instruction-set variant, scratch memory and threading (at::parallel_for) around the two
// passes of field_step_passes.cpp.
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "brain/ops/cpu/field_step_passes.h"
#include "brain/ops/cpu/isa_choice.h"
#include "brain/ops/cpu/kernels.h"
#include "brain/ops/field_step.h"
#include "brain/ops/philox.h"

namespace fieldbrain {
namespace ops {
namespace cpu {
namespace {

// The widest variant this CPU runs; FIELDBRAIN_ISA=default|avx2|avx512 caps the choice.
const FieldStepPasses& passes() { return chosen_passes(); }

}  // namespace

// The variant tables of field_step_passes.cpp (the portable one three times without AVX builds).
const FieldStepPasses& passes_for(CpuIsa isa) {
#if defined(FIELDBRAIN_OPS_AVX2)
  return table_for(isa, isa_default::kPasses, isa_avx2::kPasses, isa_avx512::kPasses);
#else
  return table_for(isa, isa_default::kPasses, isa_default::kPasses, isa_default::kPasses);
#endif
}

const FieldStepPasses& chosen_passes() { return passes_for(chosen_cpu_isa()); }

std::vector<const FieldStepPasses*> runnable_passes() {
  std::vector<const FieldStepPasses*> out;
  for (const CpuIsa isa : runnable_cpu_isas()) out.push_back(&passes_for(isa));
  return out;
}

namespace {

// Per-thread scratch, grown on first use and reused: the steady state allocates nothing.
float* thread_scratch(size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}

// Scratch budget of one pass-1 task: 1.5 MiB, so that a task's scratch stays in a 2 MiB L2
// with room for the planes it streams. At R = 32 that is a slab of 16 planes (1.4 MiB);
// 32-plane slabs (2.7 MiB, what a 3 MiB budget gave every robot at B >= 2) measured ~15%
// slower per plane on one thread and made B = 4 cost more than 4x B = 1.
// FIELDBRAIN_OPS_SCRATCH_KIB overrides it (a tuning knob for other caches).
size_t scratch_budget_floats() {
  static const size_t floats = [] {
    const char* env = std::getenv("FIELDBRAIN_OPS_SCRATCH_KIB");
    const long kib = env != nullptr ? std::atol(env) : 0;
    return (kib > 0 ? static_cast<size_t>(kib) : size_t(1536)) * 1024 / sizeof(float);
  }();
  return floats;
}

// Slab thickness (x planes) of a pass-1 task: keep its scratch within the budget (thinner
// slabs recompute relatively more halo) and give every thread work even for one robot.
int64_t slab_planes(const FieldStepPasses& p, int64_t B, int64_t R) {
  const size_t budget = scratch_budget_floats();
  const int64_t threads = std::max<int64_t>(1, at::get_num_threads());
  int64_t slabs = std::max<int64_t>(1, (threads + B - 1) / B);
  int64_t planes = (R + slabs - 1) / slabs;
  while (planes > 2 && p.pass1_scratch_floats(R, planes) > budget) {
    ++slabs;
    planes = (R + slabs - 1) / slabs;
  }
  return planes;
}

}  // namespace

// The step with either a noise tensor or a noise key (seeded: v.noise is null).
void run(const FieldStepView& v) {
  const int64_t B = v.batch, R = v.resolution;
  const bool seeded = v.noise == nullptr;
  if (B == 0 || R == 0) return;

  const FieldStepPasses& p = passes();
  const int64_t planes = slab_planes(p, B, R);
  const int64_t slabs = (R + planes - 1) / planes;
  // Per-call bookkeeping of the calling thread: [ef_max, ef_weight] per robot, one maximum per
  // pass-1 task, one squash flag per robot.
  // The seeded noise of the slab-boundary bands (HaloNoise), made once here.
  HaloNoise halo;
  if (seeded && slabs > 1 && planes >= 4) {
    thread_local std::vector<float> halo_buffer;  // grown on first use, then reused
    const size_t floats = static_cast<size_t>(B * (slabs - 1) * 48 * 4 * R * R);
    if (halo_buffer.size() < floats) halo_buffer.resize(floats);
    float* data = halo_buffer.data();
    at::parallel_for(0, B * (slabs - 1) * 48, 1, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t c = t % 48, k = (t / 48) % (slabs - 1) + 1, b = t / (48 * (slabs - 1));
        const int64_t first = k * planes - 2;
        const int64_t n = (std::min(R, first + 4) - first) * R * R;  // the last band may be clipped
        p.fill_normals(static_cast<uint64_t>(v.noise_key[2 * b]),
                       static_cast<uint64_t>(v.noise_key[2 * b + 1]), philox::kStreamSpontaneous,
                       static_cast<uint64_t>((c * R + first) * R * R), n, data + t * 4 * R * R);
      }
    });
    halo.data = data;
    halo.planes = planes;
    halo.slabs = slabs;
  }
  thread_local std::vector<float> meta;
  const size_t need = static_cast<size_t>(2 * B + B * slabs + B);
  if (meta.size() < need) meta.resize(need);
  float* ef_max = meta.data();
  float* ef_weight = ef_max + B;
  float* slab_max = ef_weight + B;
  float* squash = slab_max + B * slabs;

  at::parallel_for(0, B, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) p.ef_stats(v, b, &ef_max[b], &ef_weight[b]);
  });
  const size_t scratch1 = p.pass1_scratch_floats(R, planes);
  at::parallel_for(0, B * slabs, 1, [&](int64_t begin, int64_t end) {
    float* scratch = thread_scratch(scratch1);
    for (int64_t t = begin; t < end; ++t) {
      const int64_t b = t / slabs, x0 = (t % slabs) * planes;
      slab_max[t] = p.pass1_slab(v, b, x0, std::min(R, x0 + planes), ef_max[b], ef_weight[b],
                                 halo, scratch);
    }
  });
  // item 7: squash when max|Fn[0:48]| > 2, decided per robot
  for (int64_t b = 0; b < B; ++b) {
    float m = 0.f;
    for (int64_t k = 0; k < slabs; ++k) m = std::max(m, slab_max[b * slabs + k]);
    squash[b] = m > 2.f ? 1.f : 0.f;
  }
  const size_t scratch2 = p.pass2_scratch_floats(R);
  at::parallel_for(0, B * 64, 1, [&](int64_t begin, int64_t end) {
    float* scratch = thread_scratch(scratch2);
    for (int64_t t = begin; t < end; ++t) {
      p.pass2_channel(v, t / 64, t % 64, squash[t / 64] != 0.f, scratch);
    }
  });
}

}  // namespace cpu

std::string field_step_cpu_isa() { return cpu::passes().isa; }

}  // namespace ops
}  // namespace fieldbrain
