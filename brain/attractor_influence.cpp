// The reference influence in one walk, bit for bit the ATen expression it replaces
// (brain/attractor_influence.h). Built with -ffp-contract=off (brain/CMakeLists.txt): every
// float and double operation below is one rounding, as in ATen's kernels; an a * b + c fused
// into an FMA would round once where ATen rounds twice.
//
// What ATen computes, and so what this computes:
// - The cosine (LibTorch 1.13 and 2.6 alike, read from their behaviour on the same inputs):
//   cos = sum_i (f_i / n_F) * (p_i / n_P) in double, n_X = the 2-norm of X clamped at eps = 1e-8.
//   1.13 takes sqrt(max(sum x^2, eps * eps)), 2.6 max(||x||, eps): the same number, since
//   sqrt(fl(1e-8 * 1e-8)) is exactly 1e-8 in double. Every f_i, p_i is a float, so x_i^2 is
//   exact in double, and each quotient and product is one IEEE rounding in both; what differs is
//   only the order of the three sums. Rounded once to float, the cosine is then ATen's on either
//   release (the argument of brain/portable_math.h): the double sums differ from ATen's by a few
//   ulps of double (~1e-16 relative; ATen's own order changes with its thread count), which moves
//   the float only when the double lies that close to a float rounding boundary (~1e-8 of values).
// - gate = (1 + cos) / 2 or (1 - cos) / 2 in float (a scalar 1 or 2 meets a float tensor: float).
// - (P - F) * w: a double scalar times a float tensor is computed with the scalar rounded to float
//   (the tensor's type wins over a wrapped number), then * gate, all in float.
// - total = inf_0, total = total + inf_j in slot order; F = F + total (add_ with alpha 1: an
//   FMA with 1 is the plain sum).
#include "brain/attractor_influence.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>

namespace fieldbrain {
namespace {

constexpr double kEps = 1e-8;  // cosine_similarity's eps

// The one order of every double sum here, whatever the thread count: per channel, kLanes lanes
// (voxel mod 4) over blocks of kBlock voxels, a block's lanes added pairwise, blocks added in
// groups of kGroupBlocks, groups in order; the channels' sums then in channel order. At most 64
// values are ever added one after another, so each sum is within a few ulps of double of the
// exact one, as ATen's cascade is.
constexpr int64_t kLanes = 4, kBlock = 64, kGroupBlocks = 64;

struct ChannelSum {
  double total = 0.0, group = 0.0;
  int64_t blocks = 0;

  void add_block(const double* lane) {
    group += (lane[0] + lane[1]) + (lane[2] + lane[3]);
    if (++blocks == kGroupBlocks) {
      total += group;
      group = 0.0;
      blocks = 0;
    }
  }
  double result() const { return blocks > 0 ? total + group : total; }
};

// lane[i mod 4] += term(i) for the n voxels of one block.
template <typename Term>
inline void add_lanes(int64_t n, double* lane, Term term) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t k = 0; k < kLanes; ++k) lane[k] += term(i + k);
  }
  for (; i < n; ++i) lane[i % kLanes] += term(i);
}

// Channels per task: enough voxels that a task outweighs handing it to a thread.
int64_t channel_grain(int64_t voxels) {
  return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, voxels));
}

// Sums of each channel's squares: out[s * channels + c] for stream s (0: the field, 1 + j: slot j).
void squared_sums(const float* field, int64_t channels, int64_t voxels,
                  const std::vector<AttractorPull>& pulls, std::vector<double>& out) {
  const int64_t slots = static_cast<int64_t>(pulls.size());
  out.assign(static_cast<size_t>((1 + slots) * channels), 0.0);
  at::parallel_for(0, channels, channel_grain(voxels), [&](int64_t begin, int64_t end) {
    std::vector<ChannelSum> sums(static_cast<size_t>(1 + slots));
    for (int64_t c = begin; c < end; ++c) {
      std::fill(sums.begin(), sums.end(), ChannelSum{});
      for (int64_t start = 0; start < voxels; start += kBlock) {
        const int64_t n = std::min(kBlock, voxels - start);
        for (int64_t s = 0; s <= slots; ++s) {
          const float* x = (s == 0 ? field : pulls[s - 1].pattern) + c * voxels + start;
          double lane[kLanes] = {0.0, 0.0, 0.0, 0.0};
          add_lanes(n, lane, [x](int64_t i) {
            const double v = x[i];
            return v * v;
          });
          sums[s].add_block(lane);
        }
      }
      for (int64_t s = 0; s <= slots; ++s) out[s * channels + c] = sums[s].result();
    }
  });
}

// Sums of each channel's (f / norm_field) * (p_j / norms[j]): out[j * channels + c].
void normalised_dots(const float* field, int64_t channels, int64_t voxels,
                     const std::vector<AttractorPull>& pulls, double norm_field,
                     const std::vector<double>& norms, std::vector<double>& out) {
  const int64_t slots = static_cast<int64_t>(pulls.size());
  out.assign(static_cast<size_t>(slots * channels), 0.0);
  at::parallel_for(0, channels, channel_grain(voxels), [&](int64_t begin, int64_t end) {
    std::vector<ChannelSum> sums(static_cast<size_t>(slots));
    double unit_field[kBlock];
    for (int64_t c = begin; c < end; ++c) {
      std::fill(sums.begin(), sums.end(), ChannelSum{});
      for (int64_t start = 0; start < voxels; start += kBlock) {
        const int64_t n = std::min(kBlock, voxels - start);
        const float* f = field + c * voxels + start;
        for (int64_t i = 0; i < n; ++i) unit_field[i] = static_cast<double>(f[i]) / norm_field;
        for (int64_t j = 0; j < slots; ++j) {
          const float* p = pulls[j].pattern + c * voxels + start;
          const double norm = norms[j];
          double lane[kLanes] = {0.0, 0.0, 0.0, 0.0};
          add_lanes(n, lane, [&unit_field, p, norm](int64_t i) {
            return unit_field[i] * (static_cast<double>(p[i]) / norm);
          });
          sums[j].add_block(lane);
        }
      }
      for (int64_t j = 0; j < slots; ++j) out[j * channels + c] = sums[j].result();
    }
  });
}

// Channel sums added in channel order: the stream's whole-field sum.
double field_sum(const std::vector<double>& per_channel, int64_t stream, int64_t channels) {
  double sum = 0.0;
  for (int64_t c = 0; c < channels; ++c) sum += per_channel[stream * channels + c];
  return sum;
}

// F += sum_j ((P_j - F) * weight[j]) * gate[j], per voxel in slot order, in float.
void move_field(float* field, int64_t channels, int64_t voxels,
                const std::vector<AttractorPull>& pulls, const std::vector<float>& weight,
                const std::vector<float>& gate) {
  const int64_t slots = static_cast<int64_t>(pulls.size());
  at::parallel_for(0, channels, channel_grain(voxels), [&](int64_t begin, int64_t end) {
    float total[kBlock];
    for (int64_t c = begin; c < end; ++c) {
      for (int64_t start = 0; start < voxels; start += kBlock) {
        const int64_t n = std::min(kBlock, voxels - start);
        float* f = field + c * voxels + start;
        for (int64_t j = 0; j < slots; ++j) {
          const float* p = pulls[j].pattern + c * voxels + start;
          const float w = weight[j], g = gate[j];
          if (j == 0) {
            for (int64_t i = 0; i < n; ++i) total[i] = ((p[i] - f[i]) * w) * g;
          } else {
            for (int64_t i = 0; i < n; ++i) total[i] = total[i] + ((p[i] - f[i]) * w) * g;
          }
        }
        for (int64_t i = 0; i < n; ++i) f[i] = f[i] + total[i];
      }
    }
  });
}

}  // namespace

void attractor_influence(float* field, int64_t channels, int64_t voxels,
                         const std::vector<AttractorPull>& pulls) {
  if (pulls.empty()) return;
  const int64_t slots = static_cast<int64_t>(pulls.size());
  std::vector<double> per_channel;
  squared_sums(field, channels, voxels, pulls, per_channel);
  const auto norm_of = [&](int64_t stream) {
    return std::max(std::sqrt(field_sum(per_channel, stream, channels)), kEps);
  };
  const double norm_field = norm_of(0);
  std::vector<double> norms(static_cast<size_t>(slots));
  for (int64_t j = 0; j < slots; ++j) norms[j] = norm_of(1 + j);

  normalised_dots(field, channels, voxels, pulls, norm_field, norms, per_channel);
  std::vector<float> weight(static_cast<size_t>(slots)), gate(static_cast<size_t>(slots));
  for (int64_t j = 0; j < slots; ++j) {
    const float cos = static_cast<float>(field_sum(per_channel, j, channels));
    gate[j] = pulls[j].attract ? (1.0f + cos) / 2.0f : (1.0f - cos) / 2.0f;
    weight[j] = static_cast<float>(pulls[j].weight);
  }
  move_field(field, channels, voxels, pulls, weight, gate);
}

}  // namespace fieldbrain
