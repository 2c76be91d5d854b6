#!/usr/bin/env bash
# Cost of one thread dump of a 1000-thread JVM, three ways in one run: lockwatch dump
# (our attach client), jattach (a C attach client, the baseline) and jstack (a JVM).
# Alternates them RUNS times (default 11) and prints medians and ratios; BASELINE=BINARY adds
# another lockwatch build (an older one) to the rotation, for a before/after in one run. It does
# so for the threads' stacks 12 calls deep and then shallow (DEPTHS, default "12 0": a small dump,
# where a tool's own start-up shows most). Then the JVM's
# own pause per dump (safepoint time from -Xlog:safepoint) with and without -l on a heap
# with many objects (BALLAST_MIB, default 2048).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/thousand-threads.sh
runs=${RUNS:-11}
ballast=${BALLAST_MIB:-2048}
lockwatch=${LOCKWATCH:-build/release/daemon/app/lockwatch}
command -v jattach >/dev/null || { echo "needs the jattach package (baseline only)" >&2; exit 2; }
[ -x "$lockwatch" ] || { cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null; cmake --build build/release --target lockwatch; }

work=$(mktemp -d)
jvm=""
trap '[ -n "$jvm" ] && kill "$jvm" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

start_jvm() {  # start_jvm HEAP_MIB BALLAST_MIB LOG [DEPTH]
  thousand_threads "$work" "$1" -Xlog:safepoint:file="$3" -- 1000 "$2" 600 0 "${4:-12}"
}

ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000 )); }
median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f", m/1000}'; }

baseline=${BASELINE:-}
for depth in ${DEPTHS:-12 0}; do
start_jvm 512 0 "$work/safepoint0.log" "$depth"
"$lockwatch" dump --pid "$jvm" >"$work/dump.txt"   # starts the attach listener
threads=$(grep -c '^"' "$work/dump.txt")
bytes=$(wc -c <"$work/dump.txt")
: >"$work/lw"; : >"$work/ja"; : >"$work/js"; : >"$work/lb"
run_one() {  # run_one lw|ja|js
  case $1 in
    lw) ms "$lockwatch" dump --pid "$jvm" >>"$work/lw"
        [ -z "$baseline" ] || { sleep 0.3; ms "$baseline" dump --pid "$jvm" >>"$work/lb"; } ;;
    ja) ms jattach "$jvm" threaddump >>"$work/ja" ;;
    js) ms jstack "$jvm" >>"$work/js" ;;
  esac
  sleep 0.3  # let the target settle: jstack's own JVM start and exit load both cores
}
# The order rotates each round, so no tool always runs right after jstack.
orders=("lw ja js" "ja js lw" "js lw ja")
for i in $(seq "$runs"); do
  for tool in ${orders[$(( i % 3 ))]}; do run_one "$tool"; done
done
lw=$(median <"$work/lw"); ja=$(median <"$work/ja"); js=$(median <"$work/js")
echo "one dump of a JVM with $threads threads, stacks $depth calls deep ($bytes bytes), medians of $runs alternating runs, wall ms:"
echo "  lockwatch dump   $lw"
echo "  jattach          $ja"
echo "  jstack           $js"
awk -v lw="$lw" -v ja="$ja" -v js="$js" 'BEGIN {printf "  lockwatch / jattach = %.2fx (goal <= 1.1x); jstack / lockwatch = %.1fx (goal >= 15x)\n", lw/ja, js/lw}'
if [ -n "$baseline" ]; then
  lb=$(median <"$work/lb")
  echo "  baseline $baseline dump   $lb"
  awk -v lb="$lb" -v ja="$ja" -v lw="$lw" 'BEGIN {printf "  baseline / jattach = %.2fx; lockwatch / baseline = %.2fx\n", lb/ja, lw/lb}'
fi
kill "$jvm"; wait "$jvm" 2>/dev/null || true; jvm=""
done

heap=$(( ballast * 2 + 512 ))
start_jvm "$heap" "$ballast" "$work/safepoint.log"
for mode in plain locks; do
  flag=""; [ "$mode" = locks ] && flag="--locks"
  : >"$work/pause-$mode"
  for _ in 1 2 3 4 5; do
    before=$(grep -c 'Safepoint "PrintThreads"' "$work/safepoint.log" || true)
    "$lockwatch" dump --pid "$jvm" $flag --timeout 120s >/dev/null
    sleep 0.5
    grep 'Safepoint "PrintThreads"' "$work/safepoint.log" | tail -n +"$((before + 1))" |
      sed -n 's/.*Total: \([0-9]*\) ns.*/\1/p' >>"$work/pause-$mode"
  done
done
p0=$(awk '{print $1/1000}' "$work/pause-plain" | median)
p1=$(awk '{print $1/1000}' "$work/pause-locks" | median)
echo "JVM pause per dump (PrintThreads safepoint, -Xlog:safepoint), ${ballast} MiB of small objects, median of 5:"
echo "  without -l  ${p0} ms"
echo "  with -l     ${p1} ms"
