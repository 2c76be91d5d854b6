#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: installs what it needs, builds lockwatch,
# starts the bundled demo JVM (a shop whose request threads contend on a synchronized
# price cache and a ReentrantLock connection pool), takes ten thread dumps 200 ms apart
# with `lockwatch dump --locks` (lockwatch's own attach client) - the incident routine of
# running jstack ten times - and prints lockwatch's report of them.
#
#   scripts/demo.sh                 the bundled demo JVM
#   scripts/demo.sh --pid PID       a JVM of yours (same user as the JVM, or root)
#   scripts/demo.sh --count N       N dumps instead of 10
#   scripts/demo.sh --jstack        take the dumps with the JDK's jstack -l instead
set -euo pipefail
cd "$(dirname "$0")/.."

pid="" count=10 backend=attach
while [ $# -gt 0 ]; do
  case "$1" in
    --pid) pid=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --jstack) backend=jstack; shift ;;
    *) echo "usage: scripts/demo.sh [--pid PID] [--count N] [--jstack]" >&2; exit 2 ;;
  esac
done

scripts/deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/release --target lockwatch
lockwatch=build/release/daemon/app/lockwatch
work=build/demo
mkdir -p "$work/classes"

if [ -z "$pid" ]; then
  javac -d "$work/classes" deploy/demo/ContendedShop.java
  java -Xmx128m -cp "$work/classes" ContendedShop 12 600 >"$work/app.log" 2>&1 &
  pid=$!
  trap 'kill "$pid" 2>/dev/null || true' EXIT
  for _ in $(seq 300); do grep -qx READY "$work/app.log" && break; sleep 0.1; done
  grep -qx READY "$work/app.log" || { echo "demo JVM did not start:" >&2; cat "$work/app.log" >&2; exit 1; }
  sleep 1  # let contention build up
  echo "demo JVM (ContendedShop) running as pid $pid"
fi

dumps="$work/dumps-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$dumps"
echo "taking $count dumps of pid $pid ($backend backend, with lock owners) into $dumps"
for i in $(seq -w 1 "$count"); do
  "$lockwatch" dump --pid "$pid" --locks --backend "$backend" >"$dumps/dump-$i.txt"
  sleep 0.2
done

echo
"$lockwatch" analyze "$dumps"
echo
echo "The dumps are kept in $dumps."
echo "Machine-readable: $lockwatch analyze --format json $dumps"
