#!/usr/bin/env bash
# Configures and builds the Release tree in build/; every executable lands in build/bin/.
set -euo pipefail
cd "$(dirname "$0")/.."
args=(-S . -B build -DCMAKE_BUILD_TYPE=Release)
command -v ccache >/dev/null && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
[ "${CI:-}" = "true" ] && args+=(-DFIELDBRAIN_WERROR=ON)
cmake "${args[@]}" "$@" >/dev/null
cmake --build build -j"$(nproc)"
