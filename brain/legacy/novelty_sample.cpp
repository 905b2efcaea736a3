#include "brain/legacy/novelty_sample.h"

#include <algorithm>
#include <array>

namespace fieldbrain::legacy {

using torch::indexing::Slice;

torch::Tensor novelty_sample_aten(const torch::Tensor& field, int64_t content_features) {
  torch::Tensor content = field.index({"...", Slice(0, content_features)});
  torch::Tensor small = content.size(0) >= 8
                            ? content.index({Slice(0, 8), Slice(0, 8), Slice(0, 8), Slice(0, 8)})
                            : content;
  torch::Tensor flat = small.flatten();
  if (flat.size(0) > 512) {
    torch::Tensor idx = torch::linspace(0, static_cast<double>(flat.size(0) - 1), 512,
                                        torch::TensorOptions().dtype(torch::kLong));
    flat = flat.index({idx});
  }
  return flat;
}

const torch::Tensor& NoveltySample::take(const torch::Tensor& field, int64_t content_features) {
  TORCH_CHECK(field.dim() == 4 && field.scalar_type() == torch::kFloat32 &&
                  field.size(3) >= content_features,
              "novelty sample: a float32 [R,R,R,C] field");
  // the sampled block's sizes: Python's slices clamp to the sizes they cut
  const bool cropped = field.size(0) >= 8;
  const auto cut = [&](int64_t size) { return cropped ? std::min<int64_t>(8, size) : size; };
  const std::array<int64_t, 4> n = {cut(field.size(0)), cut(field.size(1)), cut(field.size(2)),
                                    cut(content_features)};
  const int64_t length = n[0] * n[1] * n[2] * n[3];
  if (length != flat_length_) {
    index_.clear();
    if (length > 512) {
      const torch::Tensor idx = torch::linspace(0, static_cast<double>(length - 1), 512,
                                                torch::TensorOptions().dtype(torch::kLong));
      index_.assign(idx.data_ptr<int64_t>(), idx.data_ptr<int64_t>() + idx.numel());
    } else {
      for (int64_t i = 0; i < length; ++i) index_.push_back(i);
    }
    flat_length_ = length;
  }
  const auto count = static_cast<int64_t>(index_.size());
  if (!sample_.defined() || sample_.numel() != count || sample_.use_count() > 1 ||
      sample_.storage().use_count() > 1)
    sample_ = torch::empty({count}, torch::kFloat32);
  const float* f = field.data_ptr<float>();
  float* out = sample_.data_ptr<float>();
  for (int64_t k = 0; k < count; ++k) {
    int64_t i = index_[static_cast<std::size_t>(k)];
    const int64_t c = i % n[3];
    i /= n[3];
    const int64_t z = i % n[2];
    i /= n[2];
    const int64_t y = i % n[1], x = i / n[1];
    out[k] =
        f[x * field.stride(0) + y * field.stride(1) + z * field.stride(2) + c * field.stride(3)];
  }
  return sample_;
}

}  // namespace fieldbrain::legacy
