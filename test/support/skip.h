// One way for every suite to say "this test case cannot run here": FIELDBRAIN_SKIP(reason).
//
// It prints the fixed marker "FIELDBRAIN-SKIPPED: <reason>", which every suite's CTest
// SKIP_REGULAR_EXPRESSION knows (FIELDBRAIN_SKIP_REGEX, test/CMakeLists.txt), and ends the
// case. Each Catch2 test case is its own CTest test (catch_discover_tests), so CTest reports
// exactly that case as Skipped, and scripts/test.sh lists it with the reason.
//
// Catch2 v3 (Debian 13) has SKIP(): the case ends there and Catch2 counts it as skipped.
// Catch2 v2 (Debian 12) has none: the macro returns from the function it is written in, so
// write it in the test case's body, or as the last thing a void helper the case ends with
// does. Every suite runs with `-w NoAssertions`: on v2 a case that skipped ran no assertion
// and fails that check, but CTest's SKIP_REGULAR_EXPRESSION wins over the exit code, so the
// case is reported as Skipped, never as Passed.
#pragma once

#include <iostream>
#include <sstream>
#include <string>

#include "test/support/catch.h"

#define FIELDBRAIN_SKIP_MARKER "FIELDBRAIN-SKIPPED: "

namespace fieldbrain::test {

// Prints the marker with the reason (stdout: CTest decides by the output, whatever the
// reporter); on Catch2 v3 it also ends the case (SKIP throws).
inline void announce_skip(const std::string& reason) {
  std::cout << FIELDBRAIN_SKIP_MARKER << reason << std::endl;
#if FIELDBRAIN_CATCH2_V3 && defined(SKIP)
  SKIP(FIELDBRAIN_SKIP_MARKER << reason);
#else
  WARN(FIELDBRAIN_SKIP_MARKER << reason);
#endif
}

}  // namespace fieldbrain::test

// reason: anything a std::ostream takes, `<<`-joined ("no " << path).
#define FIELDBRAIN_SKIP(reason)                                                \
  do {                                                                         \
    std::ostringstream fieldbrain_skip_reason_;                                \
    fieldbrain_skip_reason_ << reason;                                         \
    ::fieldbrain::test::announce_skip(fieldbrain_skip_reason_.str());          \
    return;                                                                    \
  } while (false)
