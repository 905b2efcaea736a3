// Many dot products at once (brain/legacy/exact_dot.h's exact_dots, the novelty's similarities)
// against torch::dot one by one: the same float for every count (whole groups of eight and the
// rest), every length the probe does not try, and operands whose sums cancel (where the order
// of the additions shows in the result).
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cstring>
#include <vector>

#include "brain/legacy/exact_dot.h"
#include "test/support/catch.h"
#include "test/support/skip.h"
#include "test/support/test_seed.h"

// named, not anonymous: the suite is built as unity batches
namespace exact_dots_test {

using fieldbrain::legacy::exact_dot_available;
using fieldbrain::legacy::exact_dots;

// how many of `count` vectors of length n give a float other than torch::dot's
int64_t differing(at::Generator& gen, int64_t count, int64_t n, double scale, bool cancelling) {
  const torch::Tensor a = at::randn({n}, gen, torch::kFloat32) * scale;
  std::vector<torch::Tensor> bs;
  std::vector<const float*> pointers;
  for (int64_t k = 0; k < count; ++k) {
    // cancelling: b close to -a plus small parts, so the sum is far below its terms
    torch::Tensor b = cancelling ? at::randn({n}, gen, torch::kFloat32) * 1e-3 - a / scale
                                 : at::randn({n}, gen, torch::kFloat32) * 0.5 + a / scale;
    if (cancelling && k % 2 == 1) b = b * -1.0;
    bs.push_back(b.contiguous());
    pointers.push_back(bs.back().data_ptr<float>());
  }
  std::vector<float> ours(static_cast<size_t>(count), -1.0f);
  exact_dots(a.data_ptr<float>(), pointers.data(), count, n, ours.data());
  int64_t wrong = 0;
  for (int64_t k = 0; k < count; ++k) {
    const float expected = torch::dot(a, bs[static_cast<size_t>(k)]).item<float>();
    if (std::memcmp(&expected, &ours[static_cast<size_t>(k)], sizeof expected) != 0) ++wrong;
  }
  return wrong;
}

TEST_CASE("Dot products taken together equal torch::dot for every count, length and scale",
          "[legacy][exact]") {
  at::set_num_threads(1);
  if (TORCH_VERSION_MAJOR == 1) REQUIRE(exact_dot_available());
  if (!exact_dot_available())
    FIELDBRAIN_SKIP("this LibTorch's float dot is not BLAS's sdot_: torch::dot is called");
  at::Generator gen =
      at::make_generator<at::CPUGeneratorImpl>(fieldbrain::test::test_seed("exact dots"));
  int64_t compared = 0, wrong = 0;
  for (int64_t count : {0, 1, 7, 8, 9, 16, 23, 200}) {
    for (int64_t n : {1, 2, 4, 5, 6, 9, 41, 64, 511, 512, 513, 1024, 1500}) {
      for (double scale : {1e-20, 1e-3, 1.0, 1e5}) {
        for (bool cancelling : {false, true}) {
          wrong += differing(gen, count, n, scale, cancelling);
          compared += count;
        }
      }
    }
  }
  INFO(compared << " dot products compared");
  CHECK(compared > 25000);
  CHECK(wrong == 0);
}

}  // namespace exact_dots_test
