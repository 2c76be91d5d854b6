#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: installs what it needs, builds lockwatch,
# starts the bundled demo JVM (a shop whose request threads contend on a synchronized
# price cache and a ReentrantLock connection pool) and runs the lockwatch daemon on it:
# a dump every 500 ms over the JVM's attach socket (settings: deploy/demo/lockwatch.yaml),
# the live view (a page for people), metrics and an API at a printed URL, incident evidence
# written when BLOCKED threads spike. Ctrl-C stops both.
#
#   scripts/demo.sh                      the bundled demo JVM
#   scripts/demo.sh --pid PID            a JVM of yours (run as its user, or root)
#   scripts/demo.sh --discover           every JVM on this machine
#   scripts/demo.sh --listen HOST:PORT   where to serve (default 127.0.0.1:9465)
#   scripts/demo.sh --jstack             take the dumps with the JDK's jstack instead
#   scripts/demo.sh --seconds N          stop after N seconds instead of at Ctrl-C
set -euo pipefail
cd "$(dirname "$0")/.."

pid="" discover="" listen=127.0.0.1:9465 backend=attach seconds=""
while [ $# -gt 0 ]; do
  case "$1" in
    --pid) pid=$2; shift 2 ;;
    --discover) discover=1; shift ;;
    --listen) listen=$2; shift 2 ;;
    --jstack) backend=jstack; shift ;;
    --seconds) seconds=$2; shift 2 ;;
    *) echo "usage: scripts/demo.sh [--pid PID | --discover] [--listen HOST:PORT] [--jstack] [--seconds N]" >&2; exit 2 ;;
  esac
done

scripts/deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/release --target lockwatch
lockwatch=build/release/daemon/app/lockwatch
work=build/demo
mkdir -p "$work/classes"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

if [ -z "$pid" ] && [ -z "$discover" ]; then
  javac -d "$work/classes" deploy/demo/ContendedShop.java
  java -Xmx128m -cp "$work/classes" ContendedShop 12 3600 >"$work/app.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 300); do grep -qx READY "$work/app.log" && break; sleep 0.1; done
  grep -qx READY "$work/app.log" || { echo "demo JVM did not start:" >&2; cat "$work/app.log" >&2; exit 1; }
  echo "demo JVM (ContendedShop) running as pid $pid"
fi

targets=()
[ -n "$pid" ] && targets=(--pid "$pid")
"$lockwatch" run --config deploy/demo/lockwatch.yaml "${targets[@]}" --listen "$listen" --backend "$backend" \
  --incident-dir "$work/incidents" >"$work/lockwatch.out" &
daemon=$!
pids+=("$daemon")
for _ in $(seq 100); do grep -q '/metrics' "$work/lockwatch.out" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*/metrics' "$work/lockwatch.out" || true)
[ -n "$url" ] || { echo "lockwatch did not start" >&2; exit 1; }
base=${url%/metrics}

# A first look after a few samples, without needing curl: bash's /dev/tcp.
sleep 4
hostport=${base#http://}
host=${hostport%:*}; host=${host#[}; host=${host%]}
exec 3<>"/dev/tcp/$host/${hostport##*:}"
printf 'GET /metrics HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$hostport" >&3
echo
echo "Hot locks right now (lockwatch_lock_waiters):"
grep '^lockwatch_lock_waiters{' <&3 | sort -t' ' -k2 -rn | head -5 || true
exec 3<&-
cat <<EOF

lockwatch is sampling. Open the live view in a browser:

  $base/

  (hot locks, waiters over time, the wait-for graph, a flame graph and the incidents; it
  refreshes itself. On a remote machine: ssh -L ${hostport##*:}:$hostport HOST, then the same URL.)

Metrics at $url
  $base/api/v1/targets                      watched JVMs
  $base/api/v1/targets/<target>/contention  hot locks, waiting and holding sites (JSON)
  $base/api/v1/targets/<target>/collapsed?state=BLOCKED   flame-graph input
Incidents (BLOCKED spikes) are written under $work/incidents, and listed on the page; read one with
  $lockwatch analyze $work/incidents/<incident>
  $lockwatch analyze --format html $work/incidents/<incident> > report.html   # one file for a ticket
Logs: stderr of lockwatch below. Ctrl-C stops.
EOF

if [ -n "$seconds" ]; then
  sleep "$seconds"
else
  wait "$daemon"
fi
