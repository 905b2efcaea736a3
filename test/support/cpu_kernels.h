// Which CPU kernels this process runs, as the fixtures that pin bits per instruction set name
// them: ATen's CPU capability (ATEN_CPU_CAPABILITY=default|avx2|avx512 lowers it) and the
// variant of fieldbrain's own per-ISA passes (FIELDBRAIN_ISA, brain/ops/cpu/isa_choice.h).
// A machine with AVX2 and no AVX-512 runs "avx2" for both; an AVX-512 machine runs the AVX2
// kernels with both variables set to avx2 (the CTest variant in test/brain).
#pragma once

#include <ATen/Version.h>

#include <cctype>
#include <string>

namespace fieldbrain::test {

// ATen's CPU capability as show_config() prints it ("AVX2", "AVX512", "DEFAULT"; "unknown").
inline std::string aten_cpu_capability() {
  const std::string config = at::show_config();
  const std::string key = "CPU capability usage: ";
  const auto at = config.find(key);
  if (at == std::string::npos) return "unknown";
  return config.substr(at + key.size(), config.find('\n', at) - at - key.size());
}

inline std::string lower_case(std::string text) {
  for (char& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

// The same as ATEN_CPU_CAPABILITY spells it: "avx512", "avx2", "default" (LibTorch 1.13 prints
// the last as "NO AVX"). Debian 12's LibTorch 1.13 runs AVX2 unless asked for AVX512, even on
// a CPU with AVX-512.
inline std::string aten_cpu_kernels() {
  const std::string shown = lower_case(aten_cpu_capability());
  return shown == "no avx" ? "default" : shown;
}

}  // namespace fieldbrain::test
