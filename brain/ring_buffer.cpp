#include "brain/ring_buffer.h"

#include <algorithm>

namespace fieldbrain {

RingBufferImpl::RingBufferImpl(RingBufferOptions options_) : options(std::move(options_)) {
  std::vector<int64_t> shape{options.batch(), options.capacity()};
  shape.insert(shape.end(), options.item_shape().begin(), options.item_shape().end());
  data = register_buffer(
      "data", torch::zeros(shape, torch::TensorOptions(options.dtype()).device(options.device())));
  counts = register_buffer("counts", torch::zeros({options.batch()}, torch::kLong));
}

void RingBufferImpl::push(const torch::Tensor& items, const std::vector<bool>& which) {
  const int64_t N = options.capacity();
  auto* c = counts.data_ptr<int64_t>();
  for (int64_t b = 0; b < options.batch(); ++b) {
    if (!which.empty() && !which[b]) continue;
    data[b][c[b] % N].copy_(items[b]);
    c[b] += 1;
  }
}

void RingBufferImpl::advance(const std::vector<bool>& which) {
  auto* c = counts.data_ptr<int64_t>();
  for (int64_t b = 0; b < options.batch(); ++b) {
    if (which.empty() || which[b]) c[b] += 1;
  }
}

int64_t RingBufferImpl::slot_of_age(int64_t b, int64_t age) const {
  const int64_t N = options.capacity();
  return ((count(b) - 1 - age) % N + N) % N;
}

torch::Tensor RingBufferImpl::valid_mask() const {
  const int64_t B = options.batch(), N = options.capacity();
  auto mask = torch::zeros({B, N}, torch::kFloat);
  auto m = mask.accessor<float, 2>();
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t j = 0; j < std::min(count(b), N); ++j) m[b][j] = 1.0f;
  }
  return mask.to(data.device());
}

torch::Tensor RingBufferImpl::mean_ages(int64_t k1, int64_t k2) const {
  const int64_t B = options.batch(), N = options.capacity();
  auto mask = torch::zeros({B, N}, torch::kFloat);
  auto den = torch::ones({B}, torch::kFloat);
  auto m = mask.accessor<float, 2>();
  auto d = den.accessor<float, 1>();
  for (int64_t b = 0; b < B; ++b) {
    const int64_t denom = std::min(k2, count(b)) - k1;
    if (denom <= 0) continue;  // nothing in range: the mean is 0
    d[b] = static_cast<float>(denom);
    const int64_t valid = std::min(count(b), N);
    for (int64_t age = k1; age < std::min(k2, valid); ++age) m[b][slot_of_age(b, age)] = 1.0f;
  }
  std::vector<int64_t> shape{B, N};
  std::vector<int64_t> den_shape{B};
  for (size_t i = 0; i < options.item_shape().size(); ++i) {
    shape.push_back(1);
    den_shape.push_back(1);
  }
  const auto dev = data.device();
  return (data * mask.to(dev).view(shape)).sum(1) / den.to(dev).view(den_shape);
}

}  // namespace fieldbrain
