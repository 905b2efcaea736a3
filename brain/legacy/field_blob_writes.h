// The hierarchy's pending update written into the field: each blob is the original's
// `field[x0:x1, y0:y1, z0:z1, channel] += value` (a Python float added to float32 values).
#pragma once

#include <torch/torch.h>

#include <vector>

#include "brain/legacy/hierarchical_prediction.h"

namespace fieldbrain::legacy {

// Adds every blob to `field` ([R,R,R,C] float32). On a contiguous field whose blobs lie inside
// it, a loop over the field's memory: ATen's add_ of a scalar is one float addition per value
// (the scalar rounded to float first; `a + 1 * b` has that single rounding with or without an
// FMA), so the loop makes ATen's floats on any release. Otherwise ATen's indexing does it (and
// throws where it throws).
void add_field_blobs(torch::Tensor& field, const std::vector<FieldBlobWrite>& blobs);

// The ATen expression it stands in for, for the tests and the fallback.
void add_field_blobs_aten(torch::Tensor& field, const std::vector<FieldBlobWrite>& blobs);

}  // namespace fieldbrain::legacy
