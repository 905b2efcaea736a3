// The one place that knows which Catch2 is installed. Every test includes this header instead
// of Catch2's own, and writes what Catch2 v2 spelled (Debian 12's catch2 2.13):
//   Approx(x)                       v3: Catch::Approx
//   Catch::Contains("text")         v3: Catch::Matchers::ContainsSubstring
//   Catch::StartsWith("text")       v3: Catch::Matchers::StartsWith
// so the same sources build against Catch2 v2 and v3 (Debian 13's catch2 3.7). main() comes
// from test/catch_main.cpp on v2 and from Catch2::Catch2WithMain on v3 (test/CMakeLists.txt).
#pragma once

// Which Catch2 CMake found (test/CMakeLists.txt defines FIELDBRAIN_CATCH2_MAJOR for every test):
// the headers must match the library linked, even where both versions' headers are installed
// (a CUDA machine's image with Catch2 v3 beside the v2 this project unpacked). Without the
// definition (a file compiled outside test/), whichever headers exist.
#if defined(FIELDBRAIN_CATCH2_MAJOR)
#define FIELDBRAIN_CATCH2_USE_V3 (FIELDBRAIN_CATCH2_MAJOR >= 3)
#elif __has_include(<catch2/catch_all.hpp>)
#define FIELDBRAIN_CATCH2_USE_V3 1
#else
#define FIELDBRAIN_CATCH2_USE_V3 0
#endif

#if FIELDBRAIN_CATCH2_USE_V3

#include <string>

#include <catch2/catch_all.hpp>

#define FIELDBRAIN_CATCH2_V3 1

using Catch::Approx;

namespace Catch {

// v2's string matchers lived in namespace Catch (through `using namespace Matchers`); v3 renamed
// Contains to ContainsSubstring (its Matchers::Contains now matches an element of a range).
inline Matchers::StringContainsMatcher Contains(const std::string& text,
                                                CaseSensitive cs = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(text, cs);
}

inline Matchers::StartsWithMatcher StartsWith(const std::string& text,
                                              CaseSensitive cs = CaseSensitive::Yes) {
  return Matchers::StartsWith(text, cs);
}

}  // namespace Catch

#else

#include <catch2/catch.hpp>

#define FIELDBRAIN_CATCH2_V3 0

#endif
