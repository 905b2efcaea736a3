#!/usr/bin/env bash
# Regenerates test/fixtures/saves/: brain saves and HRR files written by the releases that
# wrote each format (test/fixtures/saves/README.md says which commit wrote which file).
#
# For each commit: a detached worktree under $WORK (outside this checkout's working tree), a
# build of only the libraries the writer needs plus test/fixtures/saves/writer (copied into
# the worktree), run once into test/fixtures/saves/. Then the worktrees are removed.
#
#   scripts/make_old_saves.sh            # every format
#   scripts/make_old_saves.sh v2         # one tag
#
# Environment: WORK (default /tmp; the worktree is $WORK/oldsave-src-<commit>, the build
# $WORK/oldsave-build-<commit>), JOBS (default 1: the build runs at nice 19 and -j1 so a shared
# machine stays usable; 4 to 13 minutes per commit on one core here),
# KEEP=1 keeps the worktrees and builds (a second run then only relinks the writer).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
out="$repo/test/fixtures/saves"
work=${WORK:-/tmp}
jobs=${JOBS:-1}

# tag commit: the newest commit on the main line (git log --first-parent) that still wrote the
# format; commits merged from side branches later do not count as releases.
#  v1  960f848  brain archive version 1 (whole attractor bank, mt19937 generator states) in the
#              archive container version 1 (torch::pickle_save, type-tagged dicts, the v1
#              digest); HRR files written with torch::pickle_save (type-tagged dicts)
#  v2  23ac4da  brain archive version 2 (live attractor slots only, mt19937 generator states),
#              container version 2 (plain pickle, weights_only-loadable); HRR plain dicts
#  v3  7a80e10  brain archive version 3 (Philox noise_key, no profile), container version 2
# (Version 4 is what this release writes; its tests save it themselves.)
formats=("v1 960f848" "v2 23ac4da" "v3 7a80e10")
wanted=${1:-}

mkdir -p "$work"
for entry in "${formats[@]}"; do
  read -r tag commit <<<"$entry"
  [[ -n "$wanted" && "$wanted" != "$tag" ]] && continue
  src="$work/oldsave-src-$commit"
  build="$work/oldsave-build-$commit"
  full=$(git -C "$repo" rev-parse "$commit")
  echo "== $tag: $commit ($(git -C "$repo" log -1 --format=%cd --date=short "$commit"))"
  if [[ ! -d "$src" ]]; then
    git -C "$repo" worktree add --detach "$src" "$full" >/dev/null
  fi
  rm -rf "$src/old_save_writer"
  cp -r "$out/writer" "$src/old_save_writer"
  grep -q 'add_subdirectory(old_save_writer)' "$src/CMakeLists.txt" ||
    echo 'add_subdirectory(old_save_writer)' >>"$src/CMakeLists.txt"
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFIELDBRAIN_TESTS=OFF \
    "${launcher[@]}" >"$build.configure.log" 2>&1 || {
    tail -30 "$build.configure.log"
    exit 1
  }
  nice -n 19 cmake --build "$build" -j "$jobs" --target old_save_writer
  # One thread: the same floating-point reductions on every machine.
  OMP_NUM_THREADS=1 "$build/bin/old_save_writer" "$out" "$tag" "$full"
  if [[ "${KEEP:-0}" != 1 ]]; then
    git -C "$repo" worktree remove --force "$src"
    rm -rf "$build" "$build.configure.log"
  fi
done
ls -l "$out"
