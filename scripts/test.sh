#!/usr/bin/env bash
# Sets up, builds and runs every test (Catch2 through CTest).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd build
ctest --output-on-failure --no-tests=error -j1 "$@"
