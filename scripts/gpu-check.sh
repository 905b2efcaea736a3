#!/usr/bin/env bash
# scripts/gpu-check.sh [--quick] [BUILD_DIR]: everything a GPU run should check, in one log.
#
# Runs on a machine with an NVIDIA GPU, after a CUDA build (scripts/build.sh --cuda, default
# BUILD_DIR build-cuda): every suite's [cuda] tests, compute-sanitizer (memcheck, racecheck,
# initcheck) over the ops' and brain's [cuda] tests, the brain and HRR benches on the GPU (CUDA
# graph on and off), and ncu's time per kernel of one fast cycle. Everything goes to one log
# file, $GPU_CHECK_LOG (default gpu-check.log), with a summary at its end, so a short lease of
# a GPU loses nothing when it ends: each part has its own time limit and the log is written as
# the run goes. --quick: the tests, memcheck and a short bench only (about 3 minutes after the
# build on an H200).
#
# Tests run one suite at a time with a few intra-op threads each: many test binaries with every
# core's worth of OpenMP threads each on one machine slowed the CPU side of the comparisons by
# orders of magnitude and made them look hung.
set -u
quick=0
[ "${1:-}" = "--quick" ] && { quick=1; shift; }
build=${1:-build-cuda}
bin=$build/bin
log=${GPU_CHECK_LOG:-gpu-check.log}
: > "$log"
start=$SECONDS
summary=()
failed=0
note() { echo "[$((SECONDS - start)) s] $*" | tee -a "$log"; }
section() { printf '\n===== %s\n' "$*" >> "$log"; }
tool() { command -v "$1" || echo "/usr/local/cuda/bin/$1"; }
sanitizer=$(tool compute-sanitizer)
ncu=$(tool ncu)

[ -x "$bin/fieldbrain-tests-ops" ] || { echo "gpu-check: no $bin/fieldbrain-tests-ops (build with scripts/build.sh --cuda)" >&2; exit 2; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >> "$log" 2>&1 \
  || { echo "gpu-check: nvidia-smi sees no GPU" >&2; exit 2; }

# run LIMIT NAME COMMAND...: one part, its output in the log, its last result line in the summary.
run() {
  local limit=$1 name=$2
  shift 2
  section "$name: $*"
  local part
  part=$(mktemp)
  timeout "$limit" "$@" 2>&1 | tee "$part" >> "$log"
  local rc=${PIPESTATUS[0]}
  local last
  last=$(grep -E "All tests passed|test cases:|ERROR SUMMARY" "$part" | tail -1)
  rm -f "$part"
  [ $rc = 124 ] && last="ran out of its ${limit} s"
  [ $rc = 0 ] || failed=1
  summary+=("$(printf '%-34s exit %3d  %s' "$name" "$rc" "$last")")
  note "$name: exit $rc"
}

export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
for suite in ops brain hrr parity; do
  [ -x "$bin/fieldbrain-tests-$suite" ] && run 240 "tests $suite [cuda]" "$bin/fieldbrain-tests-$suite" "[cuda]"
done
tools=(memcheck)
[ $quick = 1 ] || tools+=(racecheck initcheck)
for t in "${tools[@]}"; do
  for suite in ops brain; do
    [ -x "$bin/fieldbrain-tests-$suite" ] && run 300 "$t $suite" "$sanitizer" --tool "$t" --print-limit 20 "$bin/fieldbrain-tests-$suite" "[cuda]"
  done
done
unset OMP_NUM_THREADS

bench=$bin/fieldbrain-bench
if [ -x "$bench" ]; then
  rows=(copy field_step_op field_step_seeded field_readout_op cpp_fast)
  [ $quick = 1 ] || rows+=(field_step_reference python_eager cpp_reference)
  run 180 "bench R=32" "$bench" --device cuda --R 32 --B 1 4 16 --seconds 0.5 --impl "${rows[@]}"
  if [ $quick = 0 ]; then
    run 120 "group, CUDA graph" "$bench" --device cuda --R 32 --B 1 16 64 256 --seconds 0.5 --impl group
    run 120 "group, no graph" env FIELDBRAIN_CUDA_GRAPH=0 "$bench" --device cuda --R 32 --B 1 16 64 256 --seconds 0.5 --impl group
    run 120 "ncu, one fast cycle B=1" env FIELDBRAIN_CUDA_GRAPH=0 "$ncu" --metrics gpu__time_duration.sum \
      --launch-skip 60 -c 30 "$bench" --device cuda --impl cpp_fast --R 32 --B 1 --seconds 0.05
    # max-autotune compiles for minutes the first time: last, with room.
    run 420 "torch.compile" "$bench" --device cuda --R 32 --B 1 16 --seconds 0.5 --impl field_step_op python_eager torch_compile
  fi
fi
[ -x "$bin/fieldbrain-hrr" ] && [ $quick = 0 ] && run 180 "hrr bench" "$bin/fieldbrain-hrr" bench --device auto --quick

section summary
printf '%s\n' "${summary[@]}" | tee -a "$log"
note "done; the log is $log"
exit $failed
