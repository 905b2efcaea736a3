// aten_row_vars takes its rows in groups of 32, 16 and 8 (their Welford chains side by side) and
// the rest one by one; every row count, each group's edge and a non-finite value in any group
// must still give torch.var's floats.
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cstring>
#include <limits>
#include <vector>

#include "brain/legacy/aten_sums.h"
#include "test/support/catch.h"

using fieldbrain::legacy::aten_row_vars;

namespace {

// out of aten_row_vars equals torch.var(x[:rows, :n], -1, unbiased) bit for bit
bool equals_torch_var(const torch::Tensor& x, int64_t rows, int64_t n) {
  const torch::Tensor expected =
      torch::var(x.index({torch::indexing::Slice(0, rows), torch::indexing::Slice(0, n)}),
                 at::IntArrayRef{-1}, true, false)
          .contiguous();
  std::vector<float> out(static_cast<size_t>(rows));
  aten_row_vars(x.data_ptr<float>(), rows, x.size(1), n, out.data());
  return std::memcmp(out.data(), expected.data_ptr<float>(), sizeof(float) * rows) == 0;
}

}  // namespace

TEST_CASE("The row variances in groups equal torch.var for every row count up to 100",
          "[legacy][exact]") {
  at::set_num_threads(1);
  torch::manual_seed(4711);
  const torch::Tensor x = torch::randn({100, 64}) * 0.3 + 0.02;
  for (int64_t n : {2, 5, 8, 47, 48, 64}) {
    for (int64_t rows = 1; rows <= 100; ++rows) {
      INFO("n " << n << ", rows " << rows);
      CHECK(equals_torch_var(x, rows, n));
    }
  }
}

TEST_CASE("A non-finite value in any row group leaves the other rows' variances as torch.var's",
          "[legacy][exact]") {
  at::set_num_threads(1);
  torch::manual_seed(4712);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // rows in the first 32-group, the 16-group, the 8-group and the one-by-one tail of 63 rows
  for (int64_t bad_row : {0, 31, 32, 47, 48, 55, 56, 62}) {
    for (float bad : {inf, -inf, nan}) {
      torch::Tensor x = torch::randn({63, 48}) * 2.0 - 0.5;
      x.data_ptr<float>()[bad_row * 48 + 17] = bad;
      INFO("row " << bad_row << ", value " << bad);
      CHECK(equals_torch_var(x, 63, 48));
      CHECK(equals_torch_var(x, 63, 31));
    }
  }
}
