#!/usr/bin/env bash
# scripts/gpu-check.sh [--quick | --parts LIST] [BUILD_DIR]: everything a GPU run should check,
# in one log.
#
# Runs on a machine with an NVIDIA GPU, after a CUDA build (scripts/build.sh --cuda, default
# BUILD_DIR build-cuda). The parts, in the order they run (LIST: their names, comma-separated):
#   tests      every suite's [cuda] tests, one suite at a time            (~2 min on an H200)
#   memcheck   compute-sanitizer memcheck over the ops' and brain's [cuda] tests
#   racecheck  the same with racecheck        initcheck  the same with initcheck
#              (SANITIZER_SUITES, SANITIZER_TESTS and SANITIZER_LIMIT choose the suites, the
#              Catch2 filter and each run's limit in s: defaults "ops brain", "[cuda]", 300)
#   bench      fieldbrain-bench at R = 32, B 1, 4, 16 (the fused rows; all rows without --quick)
#   group      BrainGroup ticks at B 1, 16, 64, 256, CUDA graph on and off
#   ncu        ncu's time per kernel of one steady fast cycle at B = 1, plain and rewarded
#              (8 slots pulling; with DRAM bytes), and at B = 16 each kernel's DRAM throughput,
#              occupancy, registers and launch shape
#   hrr        fieldbrain-hrr bench --device auto --quick
#   compile    the torch.compile row (max-autotune compiles for minutes: last, with room)
# Default: all of them. --quick: tests,memcheck,bench with the short bench (about 3 minutes
# after the build on an H200). A lease of a GPU is short and each command on it is time-limited,
# so a session can run the parts over several commands (docs/gpu.md "The next lease" gives the
# order), each with its own log: GPU_CHECK_LOG=gpu-check-ncu.log scripts/gpu-check.sh --parts ncu.
#
# Everything goes to one log file, $GPU_CHECK_LOG (default gpu-check.log), with a summary at its
# end, so a short lease loses nothing when it ends: each part has its own time limit and the log
# is written as the run goes. A test that dies of a signal prints its stack there
# (test/crash_report.cpp).
#
# Tests run one suite at a time with a few intra-op threads each: many test binaries with every
# core's worth of OpenMP threads each on one machine slowed the CPU side of the comparisons by
# orders of magnitude and made them look hung.
set -u
all_parts="tests memcheck racecheck initcheck bench group ncu hrr compile"
quick=0
parts=$all_parts
case "${1:-}" in
  --quick) quick=1; parts="tests memcheck bench"; shift ;;
  --parts)
    parts=${2:?"gpu-check: --parts needs a list, e.g. tests,memcheck"}
    parts=${parts//,/ }
    shift 2
    for p in $parts; do
      case " $all_parts " in *" $p "*) ;; *) echo "gpu-check: unknown part '$p' (parts: $all_parts)" >&2; exit 2 ;; esac
    done ;;
esac
want() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
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
if want tests; then
  for suite in ops brain hrr parity; do
    [ -x "$bin/fieldbrain-tests-$suite" ] && run 240 "tests $suite [cuda]" "$bin/fieldbrain-tests-$suite" "[cuda]"
  done
fi
for t in memcheck racecheck initcheck; do
  want $t || continue
  for suite in ${SANITIZER_SUITES:-ops brain}; do
    [ -x "$bin/fieldbrain-tests-$suite" ] && run "${SANITIZER_LIMIT:-300}" "$t $suite" "$sanitizer" --tool "$t" \
      --print-limit 20 "$bin/fieldbrain-tests-$suite" "${SANITIZER_TESTS:-[cuda]}"
  done
done
unset OMP_NUM_THREADS

bench=$bin/fieldbrain-bench
if [ -x "$bench" ]; then
  rows=(copy field_step_op field_step_seeded field_readout_op cpp_fast)
  [ $quick = 1 ] || rows+=(field_step_reference python_eager cpp_reference)
  want bench && run 180 "bench R=32" "$bench" --device cuda --R 32 --B 1 4 16 --seconds 0.5 --impl "${rows[@]}"
  if want group; then
    run 120 "group, CUDA graph" "$bench" --device cuda --R 32 --B 1 16 64 256 --seconds 0.5 --impl group
    run 120 "group, no graph" env FIELDBRAIN_CUDA_GRAPH=0 "$bench" --device cuda --R 32 --B 1 16 64 256 --seconds 0.5 --impl group
  fi
  if want ncu; then
    # The bench's set-up launches kernels before its first cycle (60 at B = 1, fills and the
    # initial field; more per robot at larger B: 60·B is taken as their bound), and a cycle
    # launches 27 kernels at any B. Each profile skips the set-up and 10 cycles, so it sees a
    # steady cycle, not the brain's first (n = 0: the error field returns at once, the memories
    # are empty); -c 30 covers one whole cycle whatever the kernel it starts at.
    skip() { echo $((60 * $1 + 27 * 10)); }
    run 120 "ncu, one fast cycle B=1" env FIELDBRAIN_CUDA_GRAPH=0 "$ncu" --metrics gpu__time_duration.sum \
      --launch-skip "$(skip 1)" -c 30 "$bench" --device cuda --impl cpp_fast --R 32 --B 1 --seconds 0.3
    # A rewarded cycle with its slots pulling: the row first runs one reward period (64 cycles)
    # untimed; the reward crosses the store threshold at cycle 3, so by cycle 20 all 8 slots pull
    # (sums_kernel's DRAM bytes show it: ~4.2 MB of fp16 shadow per pulling slot).
    run 120 "ncu, rewarded cycle B=1" env FIELDBRAIN_CUDA_GRAPH=0 "$ncu" --metrics gpu__time_duration.sum,dram__bytes.sum \
      --launch-skip $((60 + 27 * 20)) -c 30 "$bench" --device cuda --impl cpp_fast_reward --R 32 --B 1 --seconds 0.05
    # What the tuning needs per kernel at B = 16: DRAM bandwidth achieved (against the copy row),
    # occupancy, registers per thread, and the launch shape.
    run 180 "ncu, kernel profile B=16" env FIELDBRAIN_CUDA_GRAPH=0 "$ncu" --metrics \
      gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size \
      --launch-skip "$(skip 16)" -c 30 "$bench" --device cuda --impl cpp_fast --R 32 --B 16 --seconds 0.5
  fi
fi
want hrr && [ -x "$bin/fieldbrain-hrr" ] && run 180 "hrr bench" "$bin/fieldbrain-hrr" bench --device auto --quick
# max-autotune compiles for minutes the first time: last, with room.
want compile && [ -x "$bench" ] &&
  run 420 "torch.compile" "$bench" --device cuda --R 32 --B 1 16 --seconds 0.5 --impl field_step_op python_eager torch_compile

section summary
printf '%s\n' "${summary[@]}" | tee -a "$log"
note "done; the log is $log"
exit $failed
