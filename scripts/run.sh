#!/usr/bin/env bash
# The main job (README): see the brain drive. Sets up, builds, starts fieldbrain-server with configs/default.json on
# free loopback ports, runs one simulated PiCar-X (fieldbrain-sim, framing B as the real
# client) for a bounded number of cycles with a progress line, stops the server cleanly
# (SIGTERM: it saves and exits), draws the pictures (scripts/plot_run.py, matplotlib) and
# prints a summary table and the pictures' paths. Builds only the two executables a run needs.
#   scripts/run.sh [extra fieldbrain-sim flags, e.g. --robots 3 --reward]
#   CYCLES=300 OUT=sim-out scripts/run.sh
#   CONFIG=configs/picarx.json scripts/run.sh   (another server config)
#   BIN=build-x/bin SKIP_BUILD=1 scripts/run.sh   (binaries of another build tree)
set -euo pipefail
cd "$(dirname "$0")/.."
cycles=${CYCLES:-300}
out=${OUT:-out/run}
bin=${BIN:-build/bin}  # another build tree: BIN=build-x/bin SKIP_BUILD=1
config=${CONFIG:-configs/default.json}  # the server's config (the pictures state it)
[ "${SKIP_BUILD:-}" = "1" ] || { scripts/setup.sh; TARGETS="fieldbrain-server fieldbrain-sim" scripts/build.sh; }
mkdir -p "$out"
# Each run starts a fresh brain: the last run's save would be resumed, and a binary robot is
# answered with zeros until its save has loaded (seconds at R = 32 on a busy machine), so a
# second run of 300 cycles could end before the brain ever ran.
rm -rf "$out/state"
log="$out/server.log"
ready="$out/ready.json"  # the server's ready line: version, pid, the ports it bound
rm -f "$ready"
"$bin/fieldbrain-server" --config "$config" --host 127.0.0.1 --port 0 \
  --monitor-port 0 --state-dir "$out/state" --ready-file "$ready" >"$log" 2>&1 &
server=$!
stop_server() { kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
trap stop_server EXIT
for _ in $(seq 1 1200); do
  [ -s "$ready" ] && break
  kill -0 "$server" 2>/dev/null || { echo "fieldbrain-server failed to start:"; cat "$log"; exit 1; }
  sleep 0.1
done
[ -s "$ready" ] || { echo "fieldbrain-server did not start within 120 s"; cat "$log"; exit 1; }
read -r port monitor < <(/usr/bin/python3 -c \
  'import json, sys; r = json.load(open(sys.argv[1])); print(r["port"], r["monitor_port"])' "$ready")
echo "fieldbrain-server on 127.0.0.1:$port (monitor $monitor), log $log"
status=0
"$bin/fieldbrain-sim" --server "127.0.0.1:$port" --monitor "127.0.0.1:$monitor" \
  --robots 1 --cycles "$cycles" --out "$out" --server-config "$config" "$@" || status=$?
stop_server
/usr/bin/python3 scripts/plot_run.py "$out" || status=$?
echo "numbers: $out/summary.json, $out/run_data.json; server log: $log"
exit "$status"
