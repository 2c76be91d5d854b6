#!/usr/bin/env bash
# Regenerates the screenshots in docs/images/ from the real thing: the daemon's live view
# (`/`) on the demo JVM (deploy/demo/ContendedShop.java), and the HTML report
# (`lockwatch analyze --format html`) of the incident the daemon captures from it, each in
# headless chromium at 1400x1000.
#
#   scripts/screenshots.sh [--seconds N]   sample N seconds before the shots (default 40)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=40
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    *) echo "usage: scripts/screenshots.sh [--seconds N]" >&2; exit 2 ;;
  esac
done

scripts/deps.sh >/dev/null
[ -d build/release ] || cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/release --target lockwatch >/dev/null
lockwatch=build/release/daemon/app/lockwatch
work=$(mktemp -d /tmp/lockwatch-screenshots.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

javac -d "$work/classes" deploy/demo/ContendedShop.java
java -Xmx128m -cp "$work/classes" ContendedShop 12 600 >"$work/app.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do grep -qx READY "$work/app.log" && break; sleep 0.1; done
grep -qx READY "$work/app.log" || { echo "screenshots: the demo JVM did not start" >&2; exit 1; }
"$lockwatch" run --config deploy/demo/lockwatch.yaml --pid "${pids[0]}" --listen 127.0.0.1:0 \
  --incident-dir "$work/incidents" --log-level warn >"$work/lockwatch.out" 2>"$work/lockwatch.err" &
pids+=($!)
for _ in $(seq 100); do grep -q /metrics "$work/lockwatch.out" && break; sleep 0.1; done
base=$(sed -n 's|^lockwatch: metrics at \(http://[^ ]*\)/metrics$|\1|p' "$work/lockwatch.out")
[ -n "$base" ] || { echo "screenshots: lockwatch did not start" >&2; cat "$work/lockwatch.err" >&2; exit 1; }
echo "screenshots: sampling the demo for $seconds s at $base/"
sleep "$seconds"
incident=$(ls -d "$work"/incidents/*/ 2>/dev/null | head -1)
[ -n "$incident" ] || { echo "screenshots: no incident was captured" >&2; exit 1; }

shoot() {  # shoot URL FILE: the screenshot, and the page's DOM on stdout
  local profile
  profile=$(mktemp -d "$work/profile.XXXXXX")
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile" --hide-scrollbars \
    --window-size=1400,1000 --virtual-time-budget=3000 --screenshot="$2" --dump-dom "$1" 2>/dev/null
  [ -s "$2" ] || { echo "screenshots: chromium wrote no $2" >&2; exit 1; }
}
# The demo's contention comes in waves: shoot until the newest sample has 4 or more waiters.
for try in $(seq 30); do
  shoot "$base/?refresh=0" "$work/live.png" >"$work/live.dom"
  grep -qE 'waiting for a lock <b>([4-9]|[1-9][0-9]+)</b>' "$work/live.dom" && break
  sleep 0.5
done
cp "$work/live.png" docs/images/live-view.png
echo "screenshots: docs/images/live-view.png ($(wc -c <docs/images/live-view.png) bytes, try $try) from $base/"
"$lockwatch" analyze --format html "$incident" >"$work/report.html"
shoot "file://$work/report.html" docs/images/incident-report.png >/dev/null
echo "screenshots: docs/images/incident-report.png ($(wc -c <docs/images/incident-report.png) bytes) from lockwatch analyze --format html $(basename "$incident")"
