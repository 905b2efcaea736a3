// The fused read-out on CUDA against the same operator on the CPU (torchvision's pattern: one
// body, every device), and its device checks.
#include "test/support/catch.h"

#include "brain/ops/field_readout.h"
#include "brain/ops/field_step_inputs.h"
#include "test/support/devices.h"

using Catch::Contains;

TEST_CASE("The read-out operator gives the same statistics on every device",
          "[cuda][ops][readout]") {
  if (!fieldbrain::test::cuda_or_skip("field_readout CUDA vs CPU")) return;
  const std::string device_name = GENERATE(from_range(fieldbrain::test::test_devices()));
  const int64_t R = GENERATE(8, 10, 16, 32);
  const int64_t B = GENERATE(1, 4);
  CAPTURE(device_name, R, B);
  const torch::Device device(device_name);
  const auto field = fieldbrain::ops::make_field_step_inputs(B, R, 70 + R + B).field;
  const auto expected = fieldbrain::ops::field_readout(field);
  auto got = torch::empty({B, fieldbrain::ops::kReadoutWidth}, torch::TensorOptions(device));
  const void* before = got.data_ptr();
  fieldbrain::ops::field_readout_out(field.to(device), got);
  CHECK(got.data_ptr() == before);
  const auto diff = (got.cpu().to(torch::kDouble) - expected.to(torch::kDouble)).abs();
  const auto scale = expected.to(torch::kDouble).abs().clamp_min(1.0);
  CHECK((diff / scale).max().item<double>() <= 1e-5);
}

TEST_CASE("The read-out operator refuses an out on another device", "[cuda][ops][readout]") {
  if (!fieldbrain::test::cuda_or_skip("field_readout device checks")) return;
  const auto field = fieldbrain::ops::make_field_step_inputs(1, 8, 2).field.to(torch::kCUDA);
  auto out = torch::empty({1, fieldbrain::ops::kReadoutWidth});
  CHECK_THROWS_WITH(fieldbrain::ops::field_readout_out(field, out),
                    Contains("out must be a float32 tensor on cuda"));
}
