// The fused field step on CUDA against the same operator on the CPU, on the same inputs
// (torchvision's pattern: one body, every device): <= 1e-5 max abs difference.
#include "test/support/catch.h"

#include "brain/ops/field_step.h"
#include "brain/ops/field_step_inputs.h"
#include "test/support/devices.h"

namespace {


constexpr double kCudaTolerance = 1e-5;

fieldbrain::ops::FieldStepInputs inputs_on_device(const fieldbrain::ops::FieldStepInputs& in, const torch::Device& device) {
  return {in.field.to(device), in.noise.to(device), in.wave.to(device), in.ef.to(device),
          in.scalars.to(device)};
}

double cuda_cpu_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.cpu().to(torch::kDouble) - b.cpu().to(torch::kDouble)).abs().max().item<double>();
}

}  // namespace

TEST_CASE("The field step operator gives the same field on every device", "[cuda][ops]") {
  if (!fieldbrain::test::cuda_or_skip("field_step CUDA vs CPU")) return;
  const std::string device_name = GENERATE(from_range(fieldbrain::test::test_devices()));
  const int64_t R = GENERATE(16, 32);
  const int64_t B = GENERATE(1, 4);
  const double content = GENERATE(1.0, 4.0);  // squash off / on
  const int has_ef = GENERATE(0, -1);
  CAPTURE(device_name, R, B, content, has_ef);
  const torch::Device device(device_name);
  const auto cpu = fieldbrain::ops::make_field_step_inputs(B, R, 500 + R + B, content, has_ef);
  const auto dev = inputs_on_device(cpu, device);

  SECTION("field_step") {
    const auto expected = fieldbrain::ops::field_step(cpu.field, cpu.noise, cpu.wave, cpu.ef, cpu.scalars);
    const auto got = fieldbrain::ops::field_step(dev.field, dev.noise, dev.wave, dev.ef, dev.scalars);
    REQUIRE(got.device().type() == device.type());  // "cuda" names cuda:0
    CHECK(cuda_cpu_diff(got, expected) <= kCudaTolerance);
  }
  SECTION("field_step_out into a preallocated output") {
    torch::Tensor expected = torch::empty_like(cpu.field);
    fieldbrain::ops::field_step_out(cpu.field, cpu.noise, cpu.wave, cpu.ef, cpu.scalars, expected);
    torch::Tensor got = torch::empty_like(dev.field);
    const void* before = got.data_ptr();
    fieldbrain::ops::field_step_out(dev.field, dev.noise, dev.wave, dev.ef, dev.scalars, got);
    CHECK(got.data_ptr() == before);
    CHECK(cuda_cpu_diff(got, expected) <= kCudaTolerance);
  }
  SECTION("20 steps fed back into themselves") {
    torch::Tensor a = cpu.field.clone(), b = dev.field.clone();
    for (int i = 0; i < 20; ++i) {
      a = fieldbrain::ops::field_step(a, cpu.noise, cpu.wave, cpu.ef, cpu.scalars);
      b = fieldbrain::ops::field_step(b, dev.noise, dev.wave, dev.ef, dev.scalars);
    }
    CHECK(cuda_cpu_diff(b, a) <= kCudaTolerance);
  }
}
