#!/usr/bin/env bash
# A three-server fleet on this machine (docs/fleet.md): etcd, three fieldbrain-servers sharing
# one state directory, and HAProxy in front (deploy/haproxy.cfg), all on loopback. Prints where
# robots connect and a live table of which server holds which robot (from etcd); kill a server
# (the command is printed) and watch its robots move. Ctrl-C stops everything (the servers save
# their robots first).
#   scripts/fleet.sh                 start the fleet and watch it
#   scripts/fleet.sh FLAGS...        the same, every server started with these fieldbrain-server
#                                    flags too (e.g. --resolution 16 --profile legacy); checked
#                                    before anything starts (a bad one exits 2, as the server)
#   scripts/fleet.sh --failover      the measured demonstration instead: twelve robots, the
#                                    busiest server SIGKILLed 20 times, the figures printed
# Ports: BASE (default 19000) + 1..3 robot ports, + 81..83 web ports, + 999 HAProxy (robots),
# + 990 HAProxy's status page, + 379/380 etcd. OUT (default out/fleet) holds state and logs.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-build/bin}
if [ "${SKIP_BUILD:-}" != "1" ]; then
  TARGETS="fieldbrain-server fieldbrain-tests-cluster" scripts/build.sh
fi
if [ "${1:-}" = "--failover" ]; then
  exec "$bin/fieldbrain-tests-cluster" "[.fleet-bench][failover]"
fi
base=${BASE:-19000}
out=${OUT:-out/fleet}
etcd_url="http://127.0.0.1:$((base + 379))"
# Server i's command line: the fleet's flags, then the ones given to this script.
server_flags=("$@")
server_command() {
  local i=$1
  server_cmd=("$bin/fieldbrain-server" --host 127.0.0.1 --port $((base + i)) --monitor-port -1
    --state-dir "$out/state" --ready-file "$out/s$i.ready"
    --cluster demo --etcd "$etcd_url" --server-id "s$i"
    --set web_port=$((base + 80 + i)) --set cluster.lease_ttl_s=3
    --set cluster.renew_every_s=0.5 "${server_flags[@]}")
}
# A bad flag is refused here, with the server's message (and its suggestion for a misspelt
# flag) and its exit status, rather than in three logs after etcd started.
server_command 1
"${server_cmd[@]}" --print-config >/dev/null || exit $?
for tool in etcd haproxy curl; do
  command -v "$tool" >/dev/null || { echo "fleet.sh: $tool is missing (scripts/setup.sh installs it)"; exit 1; }
done
mkdir -p "$out/state"
pids=()
stop_all() {
  trap - EXIT INT TERM
  echo; echo "stopping: servers first (they save their robots), then HAProxy and etcd"
  for pid in "${pids[@]:1}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]:1}"; do wait "$pid" 2>/dev/null || true; done
  [ "${#pids[@]}" -gt 0 ] && kill -TERM "${pids[0]}" 2>/dev/null || true
  wait 2>/dev/null || true
}
# A signal stops the fleet and then the script (a trap alone would return to the watch loop,
# which would print "(etcd not answering)" forever): 128 + the signal, as the shell reports it.
trap stop_all EXIT
trap 'stop_all; exit 130' INT
trap 'stop_all; exit 143' TERM

# etcd and HAProxy in sessions of their own: Ctrl-C (SIGINT to the terminal's process group)
# reaches the servers, which save, while etcd stays up until they are done (stop_all).
setsid etcd --name fleet --data-dir "$out/etcd" --logger zap \
  --listen-client-urls "$etcd_url" --advertise-client-urls "$etcd_url" \
  --listen-peer-urls "http://127.0.0.1:$((base + 380))" \
  --initial-advertise-peer-urls "http://127.0.0.1:$((base + 380))" \
  --initial-cluster "fleet=http://127.0.0.1:$((base + 380))" >"$out/etcd.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
  curl -s -m 1 -X POST "$etcd_url/v3/kv/range" -d '{"key":"eA=="}' >/dev/null && break
  sleep 0.1
done

for i in 1 2 3; do
  rm -f "$out/s$i.ready"
  server_command "$i"
  "${server_cmd[@]}" >"$out/s$i.log" 2>&1 &
  pids+=($!)
done
for i in 1 2 3; do
  for _ in $(seq 1 600); do [ -s "$out/s$i.ready" ] && break; sleep 0.1; done
  [ -s "$out/s$i.ready" ] || { echo "server s$i did not start:"; cat "$out/s$i.log"; exit 1; }
done

export FLEET_LISTEN=127.0.0.1:$((base + 999)) FLEET_STATS=127.0.0.1:$((base + 990))
export FLEET_S1=127.0.0.1:$((base + 1)) FLEET_S2=127.0.0.1:$((base + 2)) FLEET_S3=127.0.0.1:$((base + 3))
export FLEET_W1=$((base + 81)) FLEET_W2=$((base + 82)) FLEET_W3=$((base + 83))
setsid haproxy -db -f deploy/haproxy.cfg >"$out/haproxy.log" 2>&1 &
pids+=($!)

cat <<INFO
fleet 'demo' is up (logs and shared state in $out/):
  robots connect to    127.0.0.1:$((base + 999))   (HAProxy; e.g. $bin/fieldbrain-sim --server 127.0.0.1:$((base + 999)))
  HAProxy status page  http://127.0.0.1:$((base + 990))/
  servers              s1 pid ${pids[1]}, s2 pid ${pids[2]}, s3 pid ${pids[3]}  (web monitors on ports $((base + 81))-$((base + 83)))
  kill one to see its robots move:   kill -9 <pid>
Which server holds which robot (etcd, every second; Ctrl-C stops the fleet):
INFO
prefix=$(printf '/fieldbrain/demo/robots/' | base64 -w0)
end=$(printf '/fieldbrain/demo/robots0' | base64 -w0)
while true; do
  table=$(curl -s -m 1 -X POST "$etcd_url/v3/kv/range" -d "{\"key\":\"$prefix\",\"range_end\":\"$end\"}" |
    /usr/bin/python3 -c '
import base64, json, sys
kvs = json.load(sys.stdin).get("kvs", [])
print("  ".join(base64.b64decode(kv["key"]).decode().rsplit("/", 1)[1] + " -> " +
                base64.b64decode(kv["value"]).decode() for kv in kvs) or "(no robots yet)")' 2>/dev/null ||
    echo "(etcd not answering)")
  printf '\r\033[K%s %s' "$(date +%T)" "$table"
  sleep 1
done
