// The static tables and the argument checks of fieldbrain::sensory_imprint_
// (brain/ops/sensory_imprint.h): what its kernels on every device take.
#include "brain/ops/sensory_imprint.h"

#include <ATen/ATen.h>

#include <cmath>
#include <map>
#include <set>

#include "brain/ops/arg_check.h"
#include "brain/ops/sensory_imprint_math.h"

namespace fieldbrain {
namespace ops {
namespace {

constexpr const char* kOp = "fieldbrain::sensory_imprint_";

}  // namespace

std::vector<at::Tensor> make_imprint_tables(int64_t S, int64_t R) {
  TORCH_CHECK(S >= 1 && R >= 4 && R <= 256, kOp, ": tables need S >= 1 and 4 <= R <= 256");
  // P's entries as in brain/sensory_imprint.cpp: (voxel, sensor) -> summed weight, ascending.
  const auto g = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(S))));
  std::map<std::pair<int64_t, int64_t>, double> entries;
  auto clampR = [R](int64_t v) { return std::min<int64_t>(R - 1, std::max<int64_t>(0, v)); };
  for (int64_t i = 0; i < S; ++i) {
    const auto fx = static_cast<int64_t>(static_cast<double>((i % g) * R) / static_cast<double>(g));
    const auto fy = static_cast<int64_t>(static_cast<double>((i / g) * R) / static_cast<double>(g));
    const auto fz = static_cast<int64_t>(static_cast<double>(i * R) / static_cast<double>(S));
    for (int64_t dx = -1; dx <= 1; ++dx)
      for (int64_t dy = -1; dy <= 1; ++dy)
        for (int64_t dz = -1; dz <= 1; ++dz)
          entries[{clampR(fx + dx) * R * R + clampR(fy + dy) * R + clampR(fz + dz), i}] +=
              std::pow(0.95, std::abs(dx) + std::abs(dy) + std::abs(dz));
  }
  std::vector<int32_t> support, begin, sensor;
  std::vector<float> weight;
  for (const auto& kv : entries) {
    const auto voxel = static_cast<int32_t>(kv.first.first);
    if (support.empty() || support.back() != voxel) {
      support.push_back(voxel);
      begin.push_back(static_cast<int32_t>(sensor.size()));
    }
    sensor.push_back(static_cast<int32_t>(kv.first.second));
    weight.push_back(static_cast<float>(kv.second));
  }
  begin.push_back(static_cast<int32_t>(sensor.size()));
  std::set<int32_t> dilated;
  for (const int32_t v : support) {
    const int64_t x = v / (R * R), y = (v / R) % R, z = v % R;
    for (int64_t i = std::max<int64_t>(0, x - 1); i <= std::min(R - 1, x + 1); ++i)
      for (int64_t j = std::max<int64_t>(0, y - 1); j <= std::min(R - 1, y + 1); ++j)
        for (int64_t k = std::max<int64_t>(0, z - 1); k <= std::min(R - 1, z + 1); ++k)
          dilated.insert(static_cast<int32_t>((i * R + j) * R + k));
  }
  std::vector<int32_t> dilated_list(dilated.begin(), dilated.end());
  std::vector<float> blob(imprint::kBlobVoxels);
  for (int i = 0; i < imprint::kBlobVoxels; ++i) {
    int dx = 0, dy = 0, dz = 0;
    imprint::blob_offset(i, dx, dy, dz);
    blob[static_cast<size_t>(i)] =
        static_cast<float>(std::pow(0.8, std::abs(dx) + std::abs(dy) + std::abs(dz)));
  }
  auto ints = [](const std::vector<int32_t>& v) {
    return at::tensor(at::ArrayRef<int32_t>(v), at::TensorOptions(at::kInt));
  };
  auto floats = [](const std::vector<float>& v) {
    return at::tensor(at::ArrayRef<float>(v), at::TensorOptions(at::kFloat));
  };
  return {ints(support),  ints(begin),        ints(sensor),
          floats(weight), ints(dilated_list), floats(blob)};
}

ImprintArrays SensoryImprint::prepare(c10::DeviceType device, at::Tensor& field, at::Tensor& occ,
                                      at::Tensor& map_data, at::Tensor& map_loc,
                                      at::Tensor& strength, at::Tensor& scratch,
                                      at::Tensor& plane_argmax, const at::Tensor& sensors,
                                      const at::Tensor& facts, const at::Tensor& values,
                                      at::TensorList drive, const at::Tensor& noise_key,
                                      at::TensorList tables) {
  ArgCheck check(kOp, device);
  check.dims("field", field, 5, "[B,64,R,R,R]");
  check.dims("sensors", sensors, 2, "[B,S]");
  const int64_t B = field.size(0), R = field.size(2), S = sensors.size(1);
  // The CUDA kernels index a robot's 64 channels with 32-bit ints: 64 R^3 must stay below 2^31.
  TORCH_CHECK(R >= 4 && R <= 256, kOp, ": R must be in [4, 256], got ", R);
  constexpr auto kRows = ArgLayout::kRows;  // views of wider tables, or columns of them
  check("field", field, {B, 64, R, R, R});
  check("occ", occ, {B, R, R, R});
  check("noise_key", noise_key, {B, 2}, at::kLong);
  check("map_data", map_data, {B, imprint::kMapCapacity, S});
  check("map_loc", map_loc, {B, imprint::kMapCapacity, 3}, at::kLong);
  check("strength", strength, {B}, at::kFloat, kRows);
  const ImprintScratchLayout layout{R * R * R, S, R};
  check("scratch", scratch, {B, kAnySize}, at::kFloat, kRows);
  TORCH_CHECK(scratch.size(1) >= layout.floats(), kOp, ": scratch needs ", layout.floats(),
              " floats per robot, got ", scratch.size(1));
  check("plane_argmax", plane_argmax, {B, kAnySize}, at::kInt, kRows);
  TORCH_CHECK(plane_argmax.size(1) >= R, kOp, ": plane_argmax needs ", R, " entries per robot");
  check("sensors", sensors, {B, S}, at::kFloat, kRows);
  check("facts", facts, {B, kAnySize}, at::kLong, kRows);
  TORCH_CHECK(facts.size(1) > kFactMapCount, kOp, ": facts has too few columns");
  check("values", values, {B, kAnySize}, at::kFloat, kRows);
  TORCH_CHECK(values.size(1) > kValueReward, kOp, ": values has too few columns");
  TORCH_CHECK(drive.size() == kDriveTerms, kOp,
              ": drive must be (conf, has_ef, boost, prev_imp, prev_amp), got ", drive.size(),
              " tensors");
  static const char* kDriveNames[kDriveTerms] = {"conf", "has_ef", "boost", "prev_imp", "prev_amp"};
  for (int i = 0; i < kDriveTerms; ++i) check(kDriveNames[i], drive[i], {B}, at::kFloat, kRows);
  TORCH_CHECK(tables.size() == 6, kOp, ": tables must be make_imprint_tables(S, R)");
  static const char* kTableNames[6] = {"support_voxel", "support_begin", "entry_sensor",
                                       "entry_weight",  "dilated_voxel", "blob_weight"};
  for (int i = 0; i < 6; ++i) {
    const bool is_float = i == 3 || i == 5;
    check(kTableNames[i], tables[i], {kAnySize}, is_float ? at::kFloat : at::kInt);
  }
  TORCH_CHECK(tables[1].size(0) == tables[0].size(0) + 1 &&
                  tables[2].size(0) == tables[3].size(0) &&
                  tables[5].size(0) == imprint::kBlobVoxels,
              kOp, ": tables are inconsistent (not from make_imprint_tables)");
  for (const auto* w : {&occ, &map_data, &map_loc, &strength, &scratch, &plane_argmax}) {
    TORCH_CHECK(!w->is_same(field), kOp, ": an output aliases the field");
  }

  ImprintArrays a;
  a.batch = B;
  a.sensory_dim = S;
  a.resolution = R;
  a.field = field.data_ptr<float>();
  a.occ = occ.data_ptr<float>();
  a.map_data = map_data.data_ptr<float>();
  a.map_loc = map_loc.data_ptr<int64_t>();
  a.strength = strength.data_ptr<float>();
  a.strength_stride = strength.stride(0);
  a.scratch = scratch.data_ptr<float>();
  a.scratch_stride = scratch.stride(0);
  a.plane_argmax = plane_argmax.data_ptr<int32_t>();
  a.plane_argmax_stride = plane_argmax.stride(0);
  a.sensors = sensors.data_ptr<float>();
  a.sensors_stride = sensors.stride(0);
  a.facts = facts.data_ptr<int64_t>();
  a.facts_stride = facts.stride(0);
  a.values = values.data_ptr<float>();
  a.values_stride = values.stride(0);
  for (int i = 0; i < kDriveTerms; ++i) {
    a.drive[i] = drive[i].data_ptr<float>();
    a.drive_stride[i] = drive[i].stride(0);
  }
  a.noise_key = noise_key.data_ptr<int64_t>();
  a.support_voxel = tables[0].data_ptr<int32_t>();
  a.support_begin = tables[1].data_ptr<int32_t>();
  a.entry_sensor = tables[2].data_ptr<int32_t>();
  a.entry_weight = tables[3].data_ptr<float>();
  a.dilated_voxel = tables[4].data_ptr<int32_t>();
  a.blob_weight = tables[5].data_ptr<float>();
  a.n_support = static_cast<int32_t>(tables[0].size(0));
  a.n_dilated = static_cast<int32_t>(tables[4].size(0));
  return a;
}

}  // namespace ops
}  // namespace fieldbrain
