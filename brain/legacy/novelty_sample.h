// compute_novelty's sample of the field, without its slice, flatten, linspace and index calls:
// content = field[..., :C]; small = content[:8, :8, :8, :8] (all of content when R < 8);
// flat = small.flatten(); where flat has more than 512 values,
// flat = flat[torch.linspace(0, len(flat) - 1, 512).long()].
#pragma once

#include <torch/torch.h>

#include <vector>

namespace fieldbrain::legacy {

// The original's expression written with ATen calls, as the port wrote it: the reference the
// loop below is held against, for the tests.
torch::Tensor novelty_sample_aten(const torch::Tensor& field, int64_t content_features);

class NoveltySample {
 public:
  // The same values, copied from the field's memory ([R,R,R,>=C] float32, any strides) into a
  // contiguous float tensor as the expression lays them out. A copy is bit for bit on any
  // release; the 512 indices are ATen's own linspace, asked once per flat length and kept. The
  // result is this object's buffer (reused while nobody else holds it), valid until the next call.
  const torch::Tensor& take(const torch::Tensor& field, int64_t content_features);

 private:
  std::vector<int64_t> index_;  // flat positions sampled (linspace's), for flat_length_
  int64_t flat_length_ = -1;
  torch::Tensor sample_;
};

}  // namespace fieldbrain::legacy
