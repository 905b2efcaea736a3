// The heavy header set every LibTorch translation unit shares; precompiled once per target
// (see cmake/FieldbrainTarget.cmake).
#pragma once
#include <torch/torch.h>
#include <torch/script.h>
