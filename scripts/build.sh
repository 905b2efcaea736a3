#!/usr/bin/env bash
# Configures and builds the Release tree in build/; every executable lands in build/bin/.
# TARGETS="a b" builds only those targets (scripts/run.sh builds just what a run needs).
# Ninja (scheduling across targets) and unity batches (cmake/FieldbrainTarget.cmake) keep a
# clean build of everything around 7 minutes on 2 cores; ccache makes rebuilds cheap.
#
#   scripts/build.sh [cmake args...]           CPU build in build/ (Debian's LibTorch)
#   scripts/build.sh --cuda [cmake args...]    CUDA build in build-cuda/ (FIELDBRAIN_CUDA=ON)
#
# BUILD_DIR=DIR puts the tree elsewhere (scripts/test-stacks.sh builds Debian 13's trees outside
# the checkout).
#
# --cuda uses the first LibTorch it finds: $LIBTORCH (an unpacked LibTorch), $CMAKE_PREFIX_PATH,
# or the torch of `python3` (torch.utils.cmake_prefix_path); it must be a CUDA build. The CUDA
# architecture is the GPU's own (nvidia-smi, else torch.cuda), or $CUDA_ARCH (e.g. 90).
set -euo pipefail
cd "$(dirname "$0")/.."
tree=${BUILD_DIR:-build}
cuda=0
if [ "${1:-}" = "--cuda" ]; then
  cuda=1
  tree=${BUILD_DIR:-build-cuda}
  shift
fi
args=(-S . -B "$tree" -DCMAKE_BUILD_TYPE=Release)

if [ "$cuda" = 1 ]; then
  py=$(command -v python3 || true)
  prefix=${LIBTORCH:-}
  if [ -z "$prefix" ] && [ -n "${CMAKE_PREFIX_PATH:-}" ]; then prefix=$CMAKE_PREFIX_PATH; fi
  if [ -z "$prefix" ] && [ -n "$py" ]; then
    prefix=$("$py" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
  fi
  if [ -z "$prefix" ]; then
    echo "build.sh --cuda: no LibTorch found: set LIBTORCH=/path/to/libtorch, or install a CUDA" \
         "PyTorch for python3 (its LibTorch is used)" >&2
    exit 1
  fi
  if [ -n "$py" ] && [ -z "${LIBTORCH:-}" ] &&
     [ "$("$py" -c 'import torch; print(torch.version.cuda is not None)' 2>/dev/null)" = "False" ]; then
    echo "build.sh --cuda: the torch of $py is a CPU-only build; set LIBTORCH to a CUDA LibTorch" >&2
    exit 1
  fi
  arch=${CUDA_ARCH:-}
  if [ -z "$arch" ] && command -v nvidia-smi >/dev/null; then
    arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
  fi
  if [ -z "$arch" ] && [ -n "$py" ]; then
    arch=$("$py" -c 'import torch; c = torch.cuda.get_device_capability(); print(f"{c[0]}{c[1]}")' \
           2>/dev/null || true)
  fi
  if [ -z "$arch" ]; then
    echo "build.sh --cuda: no GPU visible to detect its architecture; set CUDA_ARCH (e.g. 90)" >&2
    exit 1
  fi
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  args+=(-DFIELDBRAIN_CUDA=ON "-DCMAKE_PREFIX_PATH=$prefix" "-DCMAKE_CUDA_ARCHITECTURES=$arch"
         "-DCMAKE_CUDA_COMPILER=$nvcc")
  [ -n "$py" ] && args+=("-DFIELDBRAIN_PYTHON=$py")
  echo "build.sh --cuda: LibTorch from $prefix, CUDA architecture sm_$arch, nvcc $nvcc" >&2
fi

generator="Unix Makefiles"
command -v ninja >/dev/null && generator="Ninja"
# A tree configured with another generator cannot be reused: start its cache afresh.
if [ -f "$tree/CMakeCache.txt" ] && ! grep -q "^CMAKE_GENERATOR:INTERNAL=$generator\$" "$tree/CMakeCache.txt"; then
  rm -rf "$tree/CMakeCache.txt" "$tree/CMakeFiles"
fi
args+=(-G "$generator")
if command -v ccache >/dev/null; then
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Let a fresh clone reuse earlier compiles: paths relative to the checkout, and the
  # precompiled header (FIELDBRAIN_UNITY_BUILD=OFF) accepted by ccache.
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
  export CCACHE_SLOPPINESS="pch_defines,time_macros,include_file_mtime,include_file_ctime"
fi
# CI treats warnings as errors by reading the compiler's output (below), not with -Werror: a
# flag would change every compile command, so CI=true scripts/test.sh would rebuild from
# scratch a tree that scripts/run.sh had just built. (-DFIELDBRAIN_WERROR=ON still works.)
echo "build.sh: configuring $tree (CMake, ~20 s)" >&2
cmake "${args[@]}" "$@" >/dev/null
targets=()
for t in ${TARGETS:-}; do targets+=(--target "$t"); done
# What is ahead: the steps of these targets (done or not) and a rough time for a clean build,
# ~4.5 s per step of ~25 s of CPU each on a quiet 2-core machine (94 steps: ~7 min).
if [ "$generator" = "Ninja" ]; then
  steps=$(ninja -C "$tree" -t commands ${TARGETS:-all} 2>/dev/null | wc -l)
  echo "build.sh: building ${TARGETS:-everything}: $steps steps, ~$(( (steps * 9 + 59) / 120 )) min" \
       "from clean on 2 quiet cores (much less with ccache or an earlier build)" >&2
fi
if [ "${CI:-}" = "true" ]; then
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  status=0
  cmake --build "$tree" -j"$(nproc)" "${targets[@]}" 2>&1 | tee "$log" || status=$?
  [ "$status" = 0 ] || exit "$status"
  # GCC/Clang diagnostics ("file:line:col: warning: ..."); ccache replays them on a hit.
  if grep -qE '^[^ ]+:[0-9]+:[0-9]+: warning:' "$log"; then
    echo "build.sh: CI=true: the build printed compiler warnings (errors in CI):" >&2
    grep -E '^[^ ]+:[0-9]+:[0-9]+: warning:' "$log" | head -20 >&2
    exit 1
  fi
else
  cmake --build "$tree" -j"$(nproc)" "${targets[@]}"
fi
