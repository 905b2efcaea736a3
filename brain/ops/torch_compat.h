// What differs between the LibTorch versions fieldbrain builds against: Debian's 1.13 (CPU, CI)
// and current 2.x releases (CUDA machines). Everything version-dependent goes through here so
// the rest of the code reads the same on both.
#pragma once

#include <torch/version.h>

#define FIELDBRAIN_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||             \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

// c10::Allocator: from LibTorch 2.3 `allocate` is non-const and `copy_data` (used by
// Allocator::clone) is pure virtual. Allocators declare
//   c10::DataPtr allocate(size_t n) FIELDBRAIN_ALLOCATOR_CONST override;
//   void copy_data(void* dest, const void* src, size_t n) const FIELDBRAIN_COPY_DATA_OVERRIDE;
// copy_data is defined on every version (an unused extra method before 2.3); `override` is only
// spelled where the base class is known to declare it.
#if FIELDBRAIN_TORCH_AT_LEAST(2, 3)
#define FIELDBRAIN_ALLOCATOR_CONST
#define FIELDBRAIN_COPY_DATA_OVERRIDE override
#else
#define FIELDBRAIN_ALLOCATOR_CONST const
#define FIELDBRAIN_COPY_DATA_OVERRIDE
#endif
