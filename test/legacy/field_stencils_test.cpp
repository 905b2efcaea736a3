// The legacy profile's stencils (brain/legacy/field_stencils.h) against the torch calls of the
// original they replace, bit for bit.
#include "brain/legacy/field_stencils.h"

#include <ATen/Parallel.h>

#include "test/support/catch.h"

namespace {
torch::Tensor depthwise(const torch::Tensor& content, const torch::Tensor& kernel) {
  const int64_t C = content.size(3);
  return torch::conv3d(content.permute({3, 0, 1, 2}).unsqueeze(0), kernel.expand({C, 1, 3, 3, 3}),
                       c10::nullopt, at::IntArrayRef{1}, at::IntArrayRef{1}, at::IntArrayRef{1}, C)
      .squeeze(0)
      .permute({1, 2, 3, 0});
}
}  // namespace

TEST_CASE("The legacy stencils equal the original's conv3d and roll calls bit for bit",
          "[legacy]") {
  at::set_num_threads(1);
  torch::manual_seed(3);
  for (int64_t R : {8, 16}) {
    INFO("R " << R);
    torch::Tensor content = torch::randn({R, R, R, 48}) * 0.3;
    torch::Tensor diffusion = torch::tanh(torch::randn({R, R, R, 4}) * 0.05) * 0.1;
    // _apply_learned_diffusion
    torch::Tensor expected = content.clone();
    for (int a = 0; a < 3; ++a) {
      torch::Tensor k = torch::zeros({1, 1, 3, 3, 3});
      int i[3] = {1, 1, 1};
      k.index_put_({0, 0, 1, 1, 1}, -2.0);
      i[a] = 0;
      k.index_put_({0, 0, i[0], i[1], i[2]}, 1.0);
      i[a] = 2;
      k.index_put_({0, 0, i[0], i[1], i[2]}, 1.0);
      expected += depthwise(content, k) * diffusion.index({"...", a}).unsqueeze(-1);
    }
    CHECK(torch::equal(fieldbrain::legacy::learned_diffusion(content, diffusion), expected));
    // _apply_coupling's conv
    torch::Tensor activation = torch::tanh(content);
    torch::Tensor k = torch::full({1, 1, 3, 3, 3}, 0.1);
    k.index_put_({0, 0, 1, 1, 1}, 0.0);
    CHECK(torch::equal(fieldbrain::legacy::neighbour_sum(activation, static_cast<float>(0.1)),
                       depthwise(activation, k)));
    // tensor_ops.apply_diffusion
    torch::Tensor field = torch::randn({R, R, R, 64});
    torch::Tensor result = field.clone();
    for (int64_t d = 0; d < 3; ++d)
      result =
          result +
          0.05 * ((torch::roll(field, {1}, {d}) + torch::roll(field, {-1}, {d}) - 2 * field) / 2);
    CHECK(torch::equal(fieldbrain::legacy::periodic_diffusion(field, 0.05), result));
  }
}
