#!/usr/bin/env bash
# Configures and builds the Release tree in build/; every executable lands in build/bin/.
# TARGETS="a b" builds only those targets (scripts/run.sh builds just what a run needs).
# Ninja (scheduling across targets) and unity batches (cmake/FieldbrainTarget.cmake) keep a
# clean build of everything around 7 minutes on 2 cores; ccache makes rebuilds cheap.
set -euo pipefail
cd "$(dirname "$0")/.."
args=(-S . -B build -DCMAKE_BUILD_TYPE=Release)
generator="Unix Makefiles"
command -v ninja >/dev/null && generator="Ninja"
# A tree configured with another generator cannot be reused: start its cache afresh.
if [ -f build/CMakeCache.txt ] && ! grep -q "^CMAKE_GENERATOR:INTERNAL=$generator\$" build/CMakeCache.txt; then
  rm -rf build/CMakeCache.txt build/CMakeFiles
fi
args+=(-G "$generator")
if command -v ccache >/dev/null; then
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Let a fresh clone reuse earlier compiles: paths relative to the checkout, and the
  # precompiled header (FIELDBRAIN_UNITY_BUILD=OFF) accepted by ccache.
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
fi
[ "${CI:-}" = "true" ] && args+=(-DFIELDBRAIN_WERROR=ON)
cmake "${args[@]}" "$@" >/dev/null
targets=()
for t in ${TARGETS:-}; do targets+=(--target "$t"); done
cmake --build build -j"$(nproc)" "${targets[@]}"
