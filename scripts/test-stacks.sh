#!/usr/bin/env bash
# Builds and tests fieldbrain on Debian 13 (trixie: LibTorch 2.6, Catch2 v3, g++ 14, Python 3.13,
# numpy 2), the stack most users now have, from the same checkout that scripts/test.sh tests on
# Debian 12; then compiles and links the CUDA build against Debian 13's CUDA LibTorch and CUDA
# 12.4 (no GPU needed: the [cuda] test binary runs and reports its [cuda] cases skipped).
#
#   scripts/test-stacks.sh [ctest args...]        (as root) roots, builds, tests: everything
#   scripts/test-stacks.sh build                  only make the roots and build (no test runs)
#   scripts/test-stacks.sh test [ctest args...]   bring the builds up to date, run the tests
#   STACKS=cpu ... / STACKS=cuda ...              only the Debian 13 CPU stack / the CUDA link
#
# .ci/run runs `build` in the background, niced, while scripts/test.sh runs on Debian 12 (the
# roots' downloads and the Debian 13 compiles take the CPU time those tests leave idle), then
# `test`, which waits for the build to release each root (saying what it is doing, each minute)
# and finds its work done. `build` makes the CPU build first and installs the CUDA packages
# beside it, so that `test` can run the Debian 13 tests while the CUDA build is still going.
# If the background build fails, `test` redoes its work and shows the error.
#
# Two Debian 13 roots, made with debootstrap and cached outside the checkout, in
# $FIELDBRAIN_STACKS_CACHE (default /var/cache/fieldbrain):
#   trixie-root        the CPU stack: scripts/setup.sh's packages (Debian 13 names)
#   trixie-cuda-root   a copy of it with libtorch-cuda-dev, python3-torch-cuda and
#                      nvidia-cuda-toolkit (contrib/non-free) in place of the CPU LibTorch
# A root is reused when it is complete and dpkg reports it consistent, and made afresh
# otherwise; nothing depends on the cache being there. Build trees (trees/) and the compiler
# cache (ccache/) live next to the roots. The checkout is bind-mounted at /src in a root, with
# /proc, /sys and /dev; every mount is undone on exit. A lock per root (flock) keeps two runs,
# or the two phases, from using one root at the same time.
#
# The CPU stack builds everything and runs ctest (ctest args as for scripts/test.sh; default:
# everything except label `slow` and the Catch2 [slow] tests, and the fuzz smoke tests for 5 s
# each instead of 25: Debian 12's run is the one that fuzzes). The CUDA stack builds only what
# the link check needs: the brain library (brain/cycle_graph.cpp's CUDA graphs), the ops
# library (every kernel and the CUDA registration brain/ops/cuda/register.cpp) and the [cuda] test
# binary fieldbrain-tests-ops, for sm_90 and sm_80. cuDNN is not in Debian, but
# libtorch_cuda.so needs libcudnn.so.9: a stub exporting the versioned symbols libtorch_cuda.so
# imports is generated in the CUDA build tree for the link and the no-GPU run, and nothing else.
#
# Times: docs/gpu.md "Tested stacks".
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD

if [ "$(id -u)" -ne 0 ]; then
  echo "test-stacks: needs root (debootstrap, chroot, mount): sudo $0" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null; then
  echo "test-stacks: installing debootstrap (~10 s)"
  apt-get install -y -qq debootstrap >/dev/null
fi
for tool in debootstrap chroot mount findmnt flock; do
  command -v "$tool" >/dev/null || { echo "test-stacks: $tool missing (apt-get install debootstrap)" >&2; exit 1; }
done

cache=${FIELDBRAIN_STACKS_CACHE:-/var/cache/fieldbrain}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
cpu_root=$cache/trixie-root
cuda_root=$cache/trixie-cuda-root
cuda_archs=${CUDA_ARCHS:-"90;80"}
stacks=${STACKS:-cpu cuda}
phase=all
case ${1:-} in
  build | test | all) phase=$1; shift ;;
esac
ctest_args=("$@")
custom_ctest=$#
[ ${#ctest_args[@]} -eq 0 ] && ctest_args=(-LE slow)
mkdir -p "$cache/trees/cpu" "$cache/trees/cuda" "$cache/ccache" "$cache/logs"
logs=$cache/logs

# One run at a time per root. Locks are taken in the order trixie-root, then trixie-cuda-root
# (the CUDA root is made as a copy of the CPU root: that needs both). A run waiting for a root
# says each minute what the run holding it is doing (begin() writes that to $logs/now.PID).
lock() {  # lock FD NAME
  eval "exec $1>\"$cache/$2.lock\""
  flock -n "$1" && return 0
  local since=$SECONDS
  echo "test-stacks: waiting for $cache/$2, in use by another run: $(doing_now)"
  until flock -w 60 "$1"; do
    echo "test-stacks: still waiting for $cache/$2 ($(( (SECONDS - since) / 60 )) min): $(doing_now)"
  done
  echo "test-stacks: $cache/$2 is free after $(fmt_secs $((SECONDS - since)))"
}
doing_now() {
  local f out=""
  for f in "$logs"/now.*; do
    [ -f "$f" ] && kill -0 "${f##*.}" 2>/dev/null && out+="${out:+; }$(cat "$f")"
  done
  echo "${out:-(it says nothing)}"
}

# scripts/packages.sh's list (the same names on Debian 13), plus setuptools (torch.compile
# imports it).
source "$src/scripts/packages.sh"
CPU_PACKAGES=("${FIELDBRAIN_PACKAGES[@]}" python3-setuptools)
# Replace libtorch-dev and python3-torch; nvidia-cuda-toolkit-gcc brings g++-13, a host compiler
# CUDA 12.4 accepts (it refuses g++ 14).
CUDA_PACKAGES=(libtorch-cuda-dev python3-torch-cuda nvidia-cuda-toolkit nvidia-cuda-toolkit-gcc)

# --- timing -----------------------------------------------------------------------------------
part_names=()
part_secs=()
part_start=0
part_open=""
begin() {
  part_start=$SECONDS
  part_open=$*
  echo "test-stacks: $*"
  echo "since $(date +%H:%M:%S): ${*%% (*}" >"$logs/now.$BASHPID"
}
end() {
  part_names+=("$1")
  part_secs+=($((SECONDS - part_start)))
  part_open=""
  rm -f "$logs/now.$BASHPID"
}
fmt_secs() { printf '%d min %02d s' $(($1 / 60)) $(($1 % 60)); }
summary() {
  echo
  echo "test-stacks: wall time of each part"
  local i
  for i in "${!part_names[@]}"; do
    printf '  %-58s %s\n' "${part_names[$i]}" "$(fmt_secs "${part_secs[$i]}")"
  done
  printf '  %-58s %s\n' "wall time of this run ($phase)" "$(fmt_secs "$SECONDS")"
}

# --- mounts -----------------------------------------------------------------------------------
mounted=()
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -R "${mounted[$i]}" 2>/dev/null || umount -R -l "${mounted[$i]}" || true
  done
  mounted=()
}
on_exit() {
  local status=$?
  [ -n "$part_open" ] && end "FAILED: ${part_open%% (*}"
  [ -n "${apt_job:-}" ] && { kill "$apt_job" 2>/dev/null; wait "$apt_job" 2>/dev/null; } || true
  unmount_all
  [ ${#part_names[@]} -gt 0 ] && summary
  [ "$status" = 0 ] || echo "test-stacks: FAILED (exit $status); logs in $logs" >&2
}
trap on_exit EXIT
trap 'exit 130' INT TERM

bind() {  # bind SOURCE TARGET
  mkdir -p "$2"
  mount --bind "$1" "$2"
  mounted+=("$2")
}
mount_root() {  # mount_root ROOT TREE: /proc, /sys, /dev, the checkout, a build tree, the cache
  local r=$1
  mount -t proc proc "$r/proc"; mounted+=("$r/proc")
  mount -t sysfs sysfs "$r/sys"; mounted+=("$r/sys")
  mount --rbind /dev "$r/dev"; mount --make-rslave "$r/dev"; mounted+=("$r/dev")
  bind "$src" "$r/src"
  bind "$2" "$r/build"
  bind "$cache/ccache" "$r/ccache"
}
mounts_under() { findmnt -rn -o TARGET | grep -c "^$1/" || true; }

# Runs a command line in a root, niced, with a clean environment.
in_root() {  # in_root ROOT COMMAND...
  local r=$1
  shift
  chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive PYTHONDONTWRITEBYTECODE=1 CI="${CI:-}" \
    CCACHE_DIR=/ccache CCACHE_MAXSIZE=8G \
    nice -n 5 bash -c "$*"
}

# --- roots ------------------------------------------------------------------------------------
root_sane() {  # complete (marker), Debian 13, runs, dpkg consistent
  local r=$1
  [ -f "$r/.fieldbrain-root" ] && grep -qs '^VERSION_CODENAME=trixie' "$r/etc/os-release" &&
    chroot "$r" /bin/true 2>/dev/null && [ -z "$(chroot "$r" dpkg --audit 2>&1)" ]
}
remove_root() {
  local r=$1
  [ -e "$r" ] || return 0
  if [ "$(mounts_under "$r")" != 0 ]; then
    echo "test-stacks: $r still has mounts; not removing it" >&2
    exit 1
  fi
  rm -rf --one-file-system "$r"
}
make_cpu_root() {
  local r=$cpu_root
  if root_sane "$r"; then
    echo "test-stacks: reusing $r"
  else
    [ -e "$r" ] && echo "test-stacks: $r is incomplete or broken: making it afresh"
    remove_root "$r"
    begin "debootstrap Debian 13 into $r (~1-2 min, quiet)"
    debootstrap --variant=minbase --components=main,contrib,non-free,non-free-firmware \
      trixie "$r" "$mirror" >"$logs/debootstrap.log" 2>&1 ||
      { tail -20 "$logs/debootstrap.log" >&2; exit 1; }
    # No daemon starts in the root; apt keeps its downloads (the CUDA root is a copy).
    printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
    chmod +x "$r/usr/sbin/policy-rc.d"
    mkdir -p "$r/src" "$r/build" "$r/ccache"
    touch "$r/.fieldbrain-root"
    end "debootstrap (cold root)"
  fi
  install_packages "$r" cpu "${CPU_PACKAGES[@]}"
}
install_packages() {  # install_packages ROOT NAME PACKAGES...: once per package list
  local r=$1 name=$2
  shift 2
  local want="$*"
  if [ "$(cat "$r/.fieldbrain-packages-$name" 2>/dev/null)" = "$want" ]; then
    return 0
  fi
  cp /etc/resolv.conf "$r/etc/resolv.conf"
  local sz="~3 GB installed, 5-10 min"
  [ "$name" = cuda ] && sz="~2.5 GB download, 6.4 GB installed, 8-12 min"
  begin "installing the $name packages in $r ($sz, quiet; log $logs/apt-$name.log)"
  mount -t proc proc "$r/proc"; mounted+=("$r/proc")
  mount --rbind /dev "$r/dev"; mount --make-rslave "$r/dev"; mounted+=("$r/dev")
  if ! in_root "$r" "apt-get update -qq && apt-get install -y -qq --no-install-recommends $want" \
       >"$logs/apt-$name.log" 2>&1; then
    unmount_all
    tail -20 "$logs/apt-$name.log" >&2
    exit 1
  fi
  unmount_all
  echo "$want" >"$r/.fieldbrain-packages-$name"
  end "apt-get install: $name packages"
}
# libtorch-cuda-2.6 depends on nvidia-cudnn (contrib), whose postinst downloads cuDNN from
# NVIDIA: no such download here. An empty package of that name, held, stands in for it (the
# link check uses scripts/cudnn-stub.sh instead).
cudnn_placeholder() {
  in_root "$1" 'set -e
    dpkg-query -W -f="\${Version}" nvidia-cudnn 2>/dev/null | grep -q fieldbrain && exit 0
    d=$(mktemp -d)
    mkdir -p "$d/pkg/DEBIAN"
    printf "%s\n" "Package: nvidia-cudnn" "Version: 9.99~fieldbrain.placeholder" \
      "Architecture: amd64" "Maintainer: fieldbrain CI <root@localhost>" \
      "Description: empty stand-in for the cuDNN downloader (no cuDNN installed)" \
      " Lets libtorch-cuda-dev install for a compile-and-link check." >"$d/pkg/DEBIAN/control"
    dpkg-deb --build "$d/pkg" "$d/nvidia-cudnn.deb" >/dev/null
    dpkg --purge --force-depends nvidia-cudnn >/dev/null 2>&1 || true
    dpkg -i "$d/nvidia-cudnn.deb" >/dev/null
    apt-mark hold nvidia-cudnn >/dev/null
    rm -rf "$d"'
}
# The CUDA root: a copy of the CPU root (both locks held), then the CUDA packages (lock 9).
copy_cuda_root() {
  root_sane "$cuda_root" && return 0
  [ -f "$cpu_root/.fieldbrain-packages-cpu" ] && root_sane "$cpu_root" || make_cpu_root
  remove_root "$cuda_root"
  begin "copying $cpu_root to $cuda_root (~1 min)"
  [ "$(mounts_under "$cpu_root")" = 0 ] || { echo "test-stacks: $cpu_root is mounted" >&2; exit 1; }
  rm -rf --one-file-system "$cuda_root.tmp"
  cp -a "$cpu_root" "$cuda_root.tmp"
  mv "$cuda_root.tmp" "$cuda_root"
  rm -f "$cuda_root/.fieldbrain-packages-cpu"
  end "copy of the CPU root"
}
cuda_packages() {
  cudnn_placeholder "$cuda_root"
  install_packages "$cuda_root" cuda "${CUDA_PACKAGES[@]}"
}
take_cuda_root() {  # lock 9, and the CUDA root ready (lock 8 first, briefly, if it must be copied)
  if ! root_sane "$cuda_root"; then
    lock 8 trixie-root
    lock 9 trixie-cuda-root
    copy_cuda_root
    flock -u 8
  else
    lock 9 trixie-cuda-root
  fi
  cuda_packages
}

# --- the CPU stack ----------------------------------------------------------------------------
build_cpu() {  # the CPU root ready and lock 8 held; leaves the root mounted
  mount_root "$cpu_root" "$cache/trees/cpu"
  echo "test-stacks: Debian 13: $(in_root "$cpu_root" 'g++ --version | head -1'); LibTorch" \
       "$(in_root "$cpu_root" "dpkg-query -W -f='\${Version}' libtorch-dev"); Catch2" \
       "$(in_root "$cpu_root" "dpkg-query -W -f='\${Version}' catch2")"
  begin "building everything on Debian 13 (~10 min from clean on 2 cores; an up-to-date tree: seconds)"
  # The fuzz smoke tests run 5 s each here (25 s on Debian 12, whose run is the one that fuzzes).
  in_root "$cpu_root" "cd /src && BUILD_DIR=/build scripts/build.sh -DFIELDBRAIN_FUZZ_SMOKE_S=5" \
    >"$logs/build-cpu.log" 2>&1 || { tail -40 "$logs/build-cpu.log" >&2; exit 1; }
  grep -E '^build.sh: building' "$logs/build-cpu.log" || true
  end "Debian 13 CPU build (everything)"
}

run_cpu_tests() {  # after build_cpu
  # The Catch2 [slow] tests are left out like ctest's label `slow` (unless ctest args were given).
  begin "running the tests on Debian 13 (ctest ${ctest_args[*]}; ~15 min)"
  local exclude=() status=0
  if [ "$custom_ctest" = 0 ]; then
    in_root "$cpu_root" 'cd /build && ctest -N | sed -n "s/^ *Test *#[0-9]*: //p" >ctest-names.txt &&
      for b in bin/fieldbrain-tests-*; do
        "$b" "[slow]" --list-tests --verbosity quiet 2>/dev/null ||
          "$b" "[slow]" --list-test-names-only 2>/dev/null || true
      done | sed "/^$/d" | sort -u >slow-catch.txt &&
      awk "NR == FNR { slow[\$0] = 1; next }
           (\$0 in slow) || (index(\$0, \":\") && substr(\$0, index(\$0, \":\") + 1) in slow)" \
        slow-catch.txt ctest-names.txt >slow-excluded.txt'
    echo "test-stacks: leaving out $(wc -l <"$cache/trees/cpu/slow-excluded.txt") [slow] tests"
    exclude=(--exclude-from-file /build/slow-excluded.txt)
  fi
  # One test per core, as scripts/test.sh (the tests' CTest properties keep the heavy ones alone).
  in_root "$cpu_root" "cd /build && ctest --output-on-failure --no-tests=error -j$(nproc) ${ctest_args[*]} ${exclude[*]}" \
    >"$logs/ctest-cpu.log" 2>&1 || status=$?
  end "Debian 13 CPU tests"
  grep -E 'tests passed|The following tests|^\s+[0-9]+ - ' "$logs/ctest-cpu.log" || true
  if [ "$status" != 0 ]; then
    echo "test-stacks: Debian 13 tests failed (log: $logs/ctest-cpu.log)" >&2
    exit 1
  fi
}

# --- the CUDA stack: compile and link -----------------------------------------------------------
build_cuda() {  # the CUDA root ready and lock 9 held; leaves the root mounted
  mount_root "$cuda_root" "$cache/trees/cuda"
  begin "making the cuDNN link stub"
  in_root "$cuda_root" 'bash /src/scripts/cudnn-stub.sh /build/cudnn-stub' >"$logs/cudnn-stub.log" 2>&1 ||
    { cat "$logs/cudnn-stub.log" >&2; exit 1; }
  cat "$logs/cudnn-stub.log"
  end "cuDNN stub"

  local targets="fieldbrain_brain fieldbrain_ops fieldbrain-tests-ops" tcal
  tcal=$(echo "$cuda_archs" | tr ';' '\n' | sed -E 's/^([0-9]+)([0-9])$/\1.\2/' | paste -sd';')
  begin "building $targets with CUDA for sm_${cuda_archs//;/ and sm_} (~12 min from clean; up to date: seconds)"
  # LD_LIBRARY_PATH: the test binary's post-build test discovery runs it, against the stub.
  in_root "$cuda_root" "cd /src && BUILD_DIR=/build CUDA_ARCH='$cuda_archs' TORCH_CUDA_ARCH_LIST='$tcal' \
    CUDAHOSTCXX=g++-13 TARGETS='$targets' LIBTORCH=/usr LD_LIBRARY_PATH=/build/cudnn-stub \
    scripts/build.sh --cuda -DCMAKE_EXE_LINKER_FLAGS='-L/build/cudnn-stub -Wl,-rpath-link,/build/cudnn-stub'" \
    >"$logs/build-cuda.log" 2>&1 || { tail -40 "$logs/build-cuda.log" >&2; exit 1; }
  end "Debian 13 CUDA build (3 targets)"
}

run_cuda_tests() {  # after build_cuda
  echo "test-stacks: the test binary's link line:"
  in_root "$cuda_root" 'ninja -C /build -t commands fieldbrain-tests-ops | tail -1' | tee "$logs/link-line.txt"
  in_root "$cuda_root" 'cd /build &&
    echo "  nvcc compiled $(ninja -t commands fieldbrain_ops | grep -c "nvcc.*\.cu\.o") kernels;" \
         "$(cat brain/ops/CMakeFiles/fieldbrain_ops.dir/Unity/*.cxx 2>/dev/null | grep -c "cuda/register\.cpp") CUDA registration file," \
         "cycle_graph.cpp: $(cat brain/CMakeFiles/fieldbrain_brain.dir/Unity/*.cxx 2>/dev/null | grep -c "cycle_graph\.cpp") (unity batches)" &&
    LD_LIBRARY_PATH=/build/cudnn-stub ldd bin/fieldbrain-tests-ops |
      grep -E "libtorch_cuda|libcudart|libcudnn" | sed "s/^/  /"' || true

  begin "running the [cuda] tests of fieldbrain-tests-ops (no GPU: they must report skipped)"
  local status=0 skipped
  in_root "$cuda_root" 'cd /build && LD_LIBRARY_PATH=/build/cudnn-stub bin/fieldbrain-tests-ops "[cuda]"' \
    >"$logs/cuda-tests.log" 2>&1 || status=$?
  end "[cuda] test binary run"
  # test/support/skip.h prints the marker at the start of a line once per skipped case.
  skipped=$(grep -c '^FIELDBRAIN-SKIPPED: \[cuda\]' "$logs/cuda-tests.log" || true)
  tail -3 "$logs/cuda-tests.log"
  # Catch2 v3 exits 4 when every case it ran was skipped (SKIP): the expected outcome here, as
  # long as the summary names no failure.
  if [ "$status" = 4 ] && [ "$skipped" -gt 0 ] &&
     ! tail -3 "$logs/cuda-tests.log" | grep -q 'failed'; then
    status=0
  fi
  if [ "$status" != 0 ]; then
    echo "test-stacks: the [cuda] test binary failed (log: $logs/cuda-tests.log)" >&2
    exit 1
  fi
  echo "test-stacks: [cuda] tests: $skipped reported skipped (no CUDA device), exit 0"
}

# --- the phases ---------------------------------------------------------------------------------
want() { [[ " $stacks " == *" $1 "* ]]; }
for stack in $stacks; do
  case $stack in
    cpu | cuda) ;;
    *) echo "test-stacks: STACKS: cpu and/or cuda, not $stack" >&2; exit 1 ;;
  esac
done

# build: both locks from the start, so that a `test` run started meanwhile waits for each
# build; the CUDA root's copy and packages are made beside the CPU build, which needs the CPU
# root only, and lock 8 is given back as soon as the CPU build is done.
build_phase() {
  local cpu_lock=0
  if want cpu || ! root_sane "$cuda_root"; then
    lock 8 trixie-root
    cpu_lock=1
    make_cpu_root
  fi
  if want cuda; then
    lock 9 trixie-cuda-root
    copy_cuda_root
    ( trap unmount_all EXIT
      part_names=() part_secs=()
      cuda_packages
      for i in "${!part_names[@]}"; do printf '%s\t%s\n' "${part_names[$i]}" "${part_secs[$i]}"; done
    ) >"$logs/cuda-packages.out" 2>&1 &
    apt_job=$!
  fi
  if want cpu; then
    build_cpu
    unmount_all
  fi
  if [ "$cpu_lock" = 1 ]; then flock -u 8; fi
  if want cuda; then
    local status=0
    wait "$apt_job" || status=$?
    apt_job=""
    grep -v $'\t' "$logs/cuda-packages.out" || true
    while IFS=$'\t' read -r name secs; do
      part_names+=("$name (beside the CPU build)"); part_secs+=("$secs")
    done < <(grep $'\t' "$logs/cuda-packages.out" || true)
    [ "$status" = 0 ] || { echo "test-stacks: the CUDA packages failed" >&2; exit 1; }
    build_cuda
    unmount_all
    flock -u 9
  fi
}

test_phase() {  # each build brought up to date (nothing to do after `build`), then its tests
  if want cpu; then
    lock 8 trixie-root
    make_cpu_root
    build_cpu
    run_cpu_tests
    unmount_all
    flock -u 8
  fi
  if want cuda; then
    take_cuda_root
    build_cuda
    run_cuda_tests
    unmount_all
    flock -u 9
  fi
}

case $phase in
  build) build_phase ;;
  test | all) test_phase ;;
esac
echo "test-stacks: $phase passed ($stacks)"
