#include "brain/legacy/field_blob_writes.h"

namespace fieldbrain::legacy {

using torch::indexing::Slice;

void add_field_blobs_aten(torch::Tensor& field, const std::vector<FieldBlobWrite>& blobs) {
  for (const FieldBlobWrite& b : blobs)
    field.index({Slice(b.x0, b.x1), Slice(b.y0, b.y1), Slice(b.z0, b.z1), b.channel}) +=
        static_cast<double>(static_cast<float>(b.value));
}

namespace {

bool inside(const FieldBlobWrite& b, const torch::Tensor& field) {
  const auto in = [](int64_t lo, int64_t hi, int64_t n) { return lo >= 0 && lo <= hi && hi <= n; };
  return in(b.x0, b.x1, field.size(0)) && in(b.y0, b.y1, field.size(1)) &&
         in(b.z0, b.z1, field.size(2)) && b.channel >= 0 && b.channel < field.size(3);
}

}  // namespace

void add_field_blobs(torch::Tensor& field, const std::vector<FieldBlobWrite>& blobs) {
  bool direct = field.dim() == 4 && field.scalar_type() == torch::kFloat32 &&
                field.is_contiguous() && !field.requires_grad();
  for (const FieldBlobWrite& b : blobs) direct = direct && inside(b, field);
  if (!direct) return add_field_blobs_aten(field, blobs);
  const int64_t sy = field.size(2) * field.size(3), sx = field.size(1) * sy, sz = field.size(3);
  float* f = field.data_ptr<float>();
  for (const FieldBlobWrite& b : blobs) {
    const auto value = static_cast<float>(b.value);
    for (int64_t x = b.x0; x < b.x1; ++x)
      for (int64_t y = b.y0; y < b.y1; ++y)
        for (int64_t z = b.z0; z < b.z1; ++z) {
          float& v = f[x * sx + y * sy + z * sz + b.channel];
          v = v + value;
        }
  }
}

}  // namespace fieldbrain::legacy
