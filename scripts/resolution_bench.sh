#!/usr/bin/env bash
# Times the brain cycle at each resolution with the PiCar-X's sizes (S = 12, M = 6), one and two
# intra-op threads, and prints the README's resolution table from the bench's JSON
# (scripts/resolution_table.py). About a minute on a quiet 2-core machine.
#   scripts/resolution_bench.sh [OUT_DIR]     (default out/resolution; BIN=build/bin)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/resolution}
bin=${BIN:-build/bin}
mkdir -p "$out"
for t in 1 2; do
  "$bin/fieldbrain-bench" --impl cpp_fast --R 8 12 16 20 24 32 --B 1 --threads "$t" \
    --sensory-dim 12 --motor-dim 6 --json "$out/threads$t.json" >"$out/threads$t.txt"
done
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
scripts/resolution_table.py "$out/threads1.json" "$out/threads2.json"
