#!/usr/bin/env bash
# Configures and builds the Release tree in build/; every executable lands in build/bin/.
set -euo pipefail
cd "$(dirname "$0")/.."
args=(-S . -B build -DCMAKE_BUILD_TYPE=Release)
if command -v ccache >/dev/null; then
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Let a fresh clone reuse earlier compiles: paths relative to the checkout, and the
  # precompiled header accepted by ccache.
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
fi
[ "${CI:-}" = "true" ] && args+=(-DFIELDBRAIN_WERROR=ON)
cmake "${args[@]}" "$@" >/dev/null
cmake --build build -j"$(nproc)"
