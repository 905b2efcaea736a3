// brain/legacy/aten_sums.h against the ATen reductions it reproduces, bit for bit, on the shapes
// the legacy field has (rows of 4-64 channels, full fields of R = 5-16) and on row lengths
// around every boundary of ATen's cascade (vector width, chunks of four vectors, level widths).
#include "brain/legacy/aten_sums.h"

#include <ATen/Parallel.h>

#include <cstring>

#include "test/support/catch.h"

namespace {

using torch::indexing::Slice;
using namespace fieldbrain::legacy;

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("aten_sum and AtenRowSum give torch.sum's float for every row length", "[legacy]") {
  at::set_num_threads(1);
  torch::manual_seed(11);
  const int lanes = aten_float_lanes();
  CHECK((lanes == 8 || lanes == 16));
  std::vector<int64_t> lengths;
  for (int64_t n = 1; n <= 300; ++n) lengths.push_back(n);
  for (int64_t n : {511, 512, 513, 4095, 4096, 4097, 65535, 65536, 65537, 110592, 1 << 20})
    lengths.push_back(n);
  for (int64_t n : lengths) {
    INFO("n " << n);
    torch::Tensor x = torch::randn({n}) * 3.0 + 0.5;
    const float expected = x.sum().item<float>();
    CHECK(same_bits(aten_sum(x.data_ptr<float>(), n), expected));
    // fed in uneven pieces
    AtenRowSum streamed(n);
    int64_t piece = 1 + n % 13;
    for (int64_t i = 0; i < n;) {
      const int64_t m = std::min(piece, n - i);
      streamed.add(x.data_ptr<float>() + i, m);
      i += m;
      piece = piece * 7 % 4099 + 1;
    }
    CHECK(same_bits(streamed.result(), expected));
  }
}

TEST_CASE("AtenRowSum refuses a row with values missing or too many", "[legacy]") {
  std::vector<float> x(100, 1.0f);
  AtenRowSum short_row(100);
  short_row.add(x.data(), 99);
  CHECK_THROWS(short_row.result());
  AtenRowSum long_row(100);
  CHECK_THROWS(long_row.add(x.data(), 100), long_row.add(x.data(), 1));
}

TEST_CASE("The row, strided, column, slice and variance sums give the ATen reductions' floats",
          "[legacy]") {
  at::set_num_threads(1);
  torch::manual_seed(12);
  for (int64_t R : {5, 6, 16}) {
    const int64_t V = R * R * R;
    torch::Tensor field = torch::randn({R, R, R, 64}) * 0.4 + 0.05;
    const float* f = field.data_ptr<float>();
    for (int64_t slice : {4, 8, 16, 32}) {
      INFO("R " << R << ", slices of " << slice);
      std::vector<float> sums(64);
      aten_slice_column_sums(f, V, 64, slice, 64 / slice, sums.data());
      for (int64_t s = 0; s < 64 / slice; ++s) {
        torch::Tensor columns =
            torch::sum(field.index({"...", Slice(s * slice, (s + 1) * slice)}), {0, 1, 2});
        CHECK(std::memcmp(sums.data() + s * slice, columns.contiguous().data_ptr<float>(),
                          sizeof(float) * slice) == 0);
      }
    }
    for (int64_t C : {3, 4, 7, 8, 12, 16, 32, 48, 64}) {
      INFO("R " << R << ", channels " << C);
      torch::Tensor view = field.index({"...", Slice(0, C)});
      CHECK(same_bits(aten_strided_sum(f, V, 64, C), view.sum().item<float>()));
      CHECK(same_bits(aten_strided_var(f, V, 64, C), torch::var(view).item<float>()));
      std::vector<float> out(static_cast<size_t>(V));
      torch::Tensor row_sums = view.sum(-1).contiguous();
      aten_row_sums(f, V, 64, C, out.data());
      CHECK(std::memcmp(out.data(), row_sums.data_ptr<float>(), sizeof(float) * V) == 0);
      torch::Tensor row_vars = torch::var(view, at::IntArrayRef{-1}, true, false).contiguous();
      aten_row_vars(f, V, 64, C, out.data());
      CHECK(std::memcmp(out.data(), row_vars.data_ptr<float>(), sizeof(float) * V) == 0);
      for (int64_t first : {int64_t{0}, 64 - C}) {
        torch::Tensor columns =
            torch::sum(field.index({"...", Slice(first, first + C)}), {0, 1, 2}).contiguous();
        std::vector<float> sums(static_cast<size_t>(C));
        aten_column_sums(f + first, V, 64, C, sums.data());
        CHECK(std::memcmp(sums.data(), columns.data_ptr<float>(), sizeof(float) * C) == 0);
      }
    }
  }
}
