#!/usr/bin/env bash
# scripts/gpu-check.sh [--quick | --parts LIST] [BUILD_DIR]: everything a GPU run should check,
# in one log.
#
# Runs on a machine with an NVIDIA GPU, after a CUDA build (scripts/build.sh --cuda, default
# BUILD_DIR build-cuda). The parts, in the order they run (LIST: their names, comma-separated):
#   tests      every suite's [cuda] tests, one suite at a time            (~2 min on an H200)
#   memcheck   compute-sanitizer memcheck over the ops' and brain's [cuda] tests
#   racecheck  the same with racecheck        initcheck  the same with initcheck
#   bench      fieldbrain-bench at R = 32, B 1, 4, 16 (the fused rows; all rows without --quick)
#   group      BrainGroup ticks at B 1, 16, 64, 256, CUDA graph on and off
#   ab         the two CUDA kernel sets (FIELDBRAIN_KERNELS=v1 and v2, docs/gpu.md "Kernel
#              sets"): the ops' and brain's [cuda] tests, the bench (R = 32, B 1 4 16) and a
#              group tick at B = 256 under each, then one side-by-side table with the cost
#              model's floors (scripts/gpu/ab_table.py); AB_SUITES="ops" keeps it short
#   ncu        ncu's time per kernel of one fast cycle at B = 1, and at B = 16 each kernel's
#              DRAM throughput, occupancy, registers and launch shape
#   hrr        fieldbrain-hrr bench --device auto --quick
#   compile    the torch.compile row (max-autotune compiles for minutes: last, with room)
# Default: all of them. --quick: tests,memcheck,bench with the short bench (about 3 minutes
# after the build on an H200). A lease of a GPU is short and each command on it is time-limited,
# so a session can run the parts over several commands (docs/gpu.md "The next lease" gives the
# order). FIELDBRAIN_KERNELS in the environment picks the kernel set of every part but `ab`
# (e.g. ncu of the v2 kernels: FIELDBRAIN_KERNELS=v2 GPU_CHECK_LOG=gpu-check-ncu-v2.log
# scripts/gpu-check.sh --parts ncu).
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
all_parts="tests memcheck racecheck initcheck bench group ab ncu hrr compile"
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
  last_rc=$rc
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
  for suite in ops brain; do
    [ -x "$bin/fieldbrain-tests-$suite" ] && run 300 "$t $suite" "$sanitizer" --tool "$t" --print-limit 20 "$bin/fieldbrain-tests-$suite" "[cuda]"
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
  if want ab; then
    # The same tests and rows under each kernel set, one process per run (the set is read once
    # per process), then one table.
    abdir=$(mktemp -d)
    ab_bench=() ab_tests=()
    for set in v1 v2; do
      for suite in ${AB_SUITES:-ops brain}; do
        [ -x "$bin/fieldbrain-tests-$suite" ] || continue
        run 200 "ab $set: tests $suite [cuda]" env FIELDBRAIN_KERNELS=$set OMP_NUM_THREADS=4 \
          "$bin/fieldbrain-tests-$suite" "[cuda]"
        ab_tests+=("$set $suite=$last_rc")
      done
      run 120 "ab $set: bench R=32" env FIELDBRAIN_KERNELS=$set "$bench" --device cuda --R 32 --B 1 4 16 \
        --seconds 0.5 --impl field_step_seeded field_readout_op cpp_fast --json "$abdir/bench-$set.json"
      run 100 "ab $set: group B=256" env FIELDBRAIN_KERNELS=$set "$bench" --device cuda --R 32 --B 256 \
        --seconds 0.5 --impl group --json "$abdir/group-$set.json"
      ab_bench+=("$set=$abdir/bench-$set.json" "$set=$abdir/group-$set.json")
    done
    section "ab: side by side"
    python3 "$(dirname "$0")/gpu/ab_table.py" --bench "${ab_bench[@]}" --tests "${ab_tests[@]}" \
      --device-name "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" | tee -a "$log"
    rm -rf "$abdir"
  fi
  if want ncu; then
    run 120 "ncu, one fast cycle B=1" env FIELDBRAIN_CUDA_GRAPH=0 "$ncu" --metrics gpu__time_duration.sum \
      --launch-skip 60 -c 30 "$bench" --device cuda --impl cpp_fast --R 32 --B 1 --seconds 0.05
    # What the tuning needs per kernel at B = 16: DRAM bandwidth achieved (against the copy row),
    # occupancy, registers per thread, and the launch shape.
    run 180 "ncu, kernel profile B=16" env FIELDBRAIN_CUDA_GRAPH=0 "$ncu" --metrics \
      gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__grid_size,launch__block_size \
      --launch-skip 60 -c 30 "$bench" --device cuda --impl cpp_fast --R 32 --B 16 --seconds 0.05
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
