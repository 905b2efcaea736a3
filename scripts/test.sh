#!/usr/bin/env bash
# Sets up, builds and runs every test (Catch2 through CTest), then lists the tests that did not
# run and why (scripts/skipped_tests.py, from ctest's JUnit report) and repeats ctest's summary
# line ("N% tests passed, N tests failed out of N") as the last line, where CI reads it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd build
ctest_output=$(mktemp -t fieldbrain-ctest.XXXXXX)
junit=$(mktemp -t fieldbrain-ctest-junit.XXXXXX)
trap 'rm -f "$ctest_output" "$junit"' EXIT
status=0
# One test per core at once; tests that use every core, or compare cycle rates over time
# windows, say so in their CTest properties and run alone (test/CMakeLists.txt).
ctest --output-on-failure --no-tests=error -j"$(nproc)" --output-junit "$junit" "$@" 2>&1 |
  tee "$ctest_output" || status=$?
echo
python3 ../scripts/skipped_tests.py "$junit" || true
grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$ctest_output" | tail -1 || true
exit "$status"
