// CUDA kernels of fieldbrain::prediction_score / prediction_act (brain/ops/prediction.h), raw
// CUDA C++ without LibTorch headers (see cuda/launchers.h). Compiled with --fmad=false: the
// shared arithmetic of prediction_math.h rounds each product before its sum, as the CPU does.
//   score: one thread per robot (S values each).
//   act:   one block per robot: threads over the 64 cells and the 16x64 temporal means, then
//          (after a barrier, the four timescale confidences in shared memory) threads over the
//          sensors (hpred, pred, pc, the ring push) and the motors.
//   echo:  a grid over the voxels of one channel (blockIdx.y = robot, blockIdx.z = channel 62
//          or 63), after `act` on the same stream; each block takes the motors' mean magnitude
//          once into shared memory.
// Index math is 32-bit inside a robot's arrays (R <= 1024 is checked by the schema, so a
// channel has < 2^31 voxels); robot offsets are 64-bit.
#include <cuda_runtime.h>

#include "brain/ops/cuda/launchers.h"

namespace fieldbrain {
namespace ops {
namespace cuda {
namespace {

namespace pm = prediction;

constexpr int kScoreThreads = 128;
constexpr int kActThreads = 128;
constexpr int kEchoThreads = 256;

__global__ void score_kernel(pm::ScoreArgs a, int batch) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < batch) pm::score_robot(a, b);
}

__global__ void act_kernel(pm::ActArgs a) {
  const int64_t b = blockIdx.x;
  const int S = static_cast<int>(a.S), M = static_cast<int>(a.M);
  const float* row = a.readout + b * kReadoutWidth;
  const int64_t* facts = a.facts + b * a.facts_stride;
  __shared__ float cf[pm::kTimescales];

  const float threshold = pm::pooling_threshold(row);
  for (int cell = threadIdx.x; cell < kReadoutCells; cell += blockDim.x)
    a.active[b * kReadoutCells + cell] = pm::cell_active(row, cell, threshold);
  for (int i = threadIdx.x; i < 16 * kReadoutCells; i += blockDim.x)
    a.temporal[b * 16 * kReadoutCells + i] = pm::cell_temporal(row, i / kReadoutCells, i % kReadoutCells);
  if (threadIdx.x < pm::kTimescales) {
    const int k = threadIdx.x;
    cf[k] = pm::timescale_confidence(a.herr[k] + b * pm::kHerrCapacity,
                                     pm::herr_count_after(facts, k));
  }
  if (threadIdx.x == 0) {  // 0/1 values: the order of the sum does not matter
    float count = 0.0f;
    for (int cell = 0; cell < kReadoutCells; ++cell) count += pm::cell_active(row, cell, threshold);
    a.n_active[b] = count;
  }
  __syncthreads();

  const int64_t before = facts[kFactRecentCount];
  const int64_t after = before + 1;
  float* recent = a.recent + b * pm::kRecentCapacity * S;
  const float* age1 = recent + ((after + 1) % pm::kRecentCapacity) * S;
  const float* age2 = recent + (after % pm::kRecentCapacity) * S;
  float* newest = recent + (before % pm::kRecentCapacity) * S;  // a third slot: no race
  const float* sensors = a.sensors + b * S;
  const float* W = a.W + b * 4 * 16 * S;
  const float content = row[kReadoutSummary + kSummaryContentAbsMean];
  for (int j = threadIdx.x; j < S; j += blockDim.x) {
    float hp[pm::kTimescales];
    for (int k = 0; k < pm::kTimescales; ++k) {
      hp[k] = pm::hierarchical_prediction(row, W, k, j, S);
      a.hpred[(b * 4 + k) * S + j] = hp[k];
    }
    const int cell = j % kReadoutCells;
    pm::predict_sensor(cf, hp, sensors[j], age1[j], age2[j], after,
                       pm::cell_active(row, cell, threshold),
                       pm::cell_temporal(row, j % 16, cell), content, a.pred[b * S + j],
                       a.pc[b * S + j]);
    newest[j] = sensors[j];
  }
  for (int i = threadIdx.x; i < M; i += blockDim.x)
    a.motor[b * M + i] = pm::motor_command(row, a.noise_key + 2 * b, a.explore[b], i, M);
}

__global__ void echo_kernel(const float* motor, const float* lin, float* field, int M, int R) {
  const int64_t b = blockIdx.y;
  const float* m = motor + b * M;
  __shared__ float magnitude;
  if (threadIdx.x == 0) magnitude = pm::motor_abs_mean(m, M);
  __syncthreads();
  const int V = R * R * R;
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= V) return;
  const int channel = blockIdx.z;
  const int y = (v / R) % R, z = v % R;
  float* f = field + (b * 64 + 62 + channel) * static_cast<int64_t>(V) + v;
  *f = channel == 0 ? pm::echo_direction(*f, m, M, lin[y], lin[z]) : pm::echo_magnitude(*f, magnitude);
}

}  // namespace

int launch(const pm::ScoreArgs& args, void* stream) {
  const int64_t batch = args.batch;
  if (batch == 0) return 0;
  const auto s = static_cast<cudaStream_t>(stream);
  const int blocks = static_cast<int>((batch + kScoreThreads - 1) / kScoreThreads);
  score_kernel<<<blocks, kScoreThreads, 0, s>>>(args, static_cast<int>(batch));
  return static_cast<int>(cudaGetLastError());
}

int launch(const pm::ActArgs& args, void* stream) {
  const int64_t batch = args.batch;
  if (batch == 0) return 0;
  const auto s = static_cast<cudaStream_t>(stream);
  act_kernel<<<static_cast<unsigned>(batch), kActThreads, 0, s>>>(args);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return static_cast<int>(err);
  const int64_t voxels = args.R * args.R * args.R;
  const dim3 grid(static_cast<unsigned>((voxels + kEchoThreads - 1) / kEchoThreads),
                  static_cast<unsigned>(batch), 2);
  echo_kernel<<<grid, kEchoThreads, 0, s>>>(args.motor, args.lin, args.field,
                                            static_cast<int>(args.M), static_cast<int>(args.R));
  return static_cast<int>(cudaGetLastError());
}

}  // namespace cuda
}  // namespace ops
}  // namespace fieldbrain
