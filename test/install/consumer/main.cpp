// Steps a field brain through the installed fieldbrain package and binds two HRR vectors.
#include <cmath>
#include <cstdio>

#include <fieldbrain/brain/field_brain.h>
#include <fieldbrain/hrr/algebra.h>
#include <fieldbrain/hrr/similarity.h>

int main() {
  fieldbrain::BrainConfig config;
  config.sensory_dim = 4;
  config.motor_dim = 2;
  config.resolution = 8;
  config.field_step = "fast";  // the fused operator: libfieldbrain_ops.so must be loaded
  fieldbrain::FieldBrain brain(config, std::vector<uint64_t>{7});
  torch::Tensor motors;
  for (int i = 0; i < 3; ++i) motors = brain->step(torch::full({1, 4}, 0.5), torch::zeros({1}));

  auto a = torch::randn({512}) / std::sqrt(512.0), b = torch::randn({512}) / std::sqrt(512.0);
  const double cos = fieldbrain::hrr::cosine(fieldbrain::hrr::unbind(fieldbrain::hrr::bind(a, b), b), a).item<double>();
  std::printf("cycles %lld motors %s cos(a, unbind(bind(a,b),b)) %.3f\n",
              static_cast<long long>(brain->cycle()), motors.sizes() == torch::IntArrayRef({1, 2}) ? "[1,2]" : "wrong", cos);
  const bool ok = brain->cycle() == 3 && motors.sizes() == torch::IntArrayRef({1, 2}) &&
                  motors.abs().max().item<float>() < 1.0f && cos > 0.5;
  return ok ? 0 : 1;
}
