#!/usr/bin/env bash
# What a Thread.dump_to_file JSON dump costs next to Thread.print, on Temurin 25, in one run.
#
# The JVM is tests/java/bench/VirtualThreadsBench.java with 1000 platform and 10 000 virtual
# threads (some of each contending) and a probe thread that records each oversleep of a 1 ms
# sleep: the application's stalls. ROUNDS times (default 7), in a rotating order:
#   print    jcmd PID Thread.print
#   json     jcmd PID Thread.dump_to_file -format=json FILE
#   control  jcmd PID VM.version (no dump: what starting jcmd alone costs the application)
#   lw-print / lw-json   lockwatch dump --format print|json (lockwatch's own attach client),
#                        when this build's `lockwatch dump` has --format json
# and per dump: the probe's worst stall, the JVM's safepoint time (hsperfdata
# sun.rt.safepointTime, read with jcmd PerfCounter.print before and after) and the wall time.
# Then lockwatch's CPU per sample for each form, in process (lockwatch_bench's BM_DaemonSample
# and BM_ParseAnalyze on the last dump of each form), per thread, and the peak RSS of
# `lockwatch analyze` on a JSON dump of a JVM with 100 000 virtual threads.
#
# Environment: JDK25_HOME (default /usr/lib/jvm/temurin-25-jdk-amd64), ROUNDS, LOCKWATCH (the
# binary, default build/release/daemon/app/lockwatch), LOCKWATCH_BENCH (default
# build/release/bench/lockwatch_bench), PLATFORM (1000), VIRTUAL (10000), BIG_VIRTUAL (100000).
set -euo pipefail
cd "$(dirname "$0")/.."
jdk=${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
rounds=${ROUNDS:-7}
platform=${PLATFORM:-1000}
virtual=${VIRTUAL:-10000}
big_virtual=${BIG_VIRTUAL:-100000}
lockwatch=${LOCKWATCH:-build/release/daemon/app/lockwatch}
bench=${LOCKWATCH_BENCH:-build/release/bench/lockwatch_bench}
[ -x "$jdk/bin/java" ] || { echo "needs Temurin 25 (or any JDK 25) at $jdk; set JDK25_HOME" >&2; exit 2; }
if [ ! -x "$lockwatch" ] || [ ! -x "$bench" ]; then
  cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build/release --target lockwatch lockwatch_bench
fi
jcmd="$jdk/bin/jcmd"

work=$(mktemp -d)
jvm=""
trap '[ -n "$jvm" ] && kill "$jvm" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
"$jdk/bin/javac" -d "$work" tests/java/bench/VirtualThreadsBench.java

start_jvm() {  # start_jvm PLATFORM VIRTUAL STALL_FILE
  "$jdk/bin/java" -Xss512k -Xmx2g -XX:+UseG1GC -cp "$work" VirtualThreadsBench "$1" "$2" 1800 "$3" >"$work/out" 2>&1 &
  jvm=$!
  for _ in $(seq 1200); do grep -qx READY "$work/out" && return; sleep 0.1; done
  echo "JVM did not start" >&2; cat "$work/out" >&2; exit 1
}
stop_jvm() { kill "$jvm"; wait "$jvm" 2>/dev/null || true; jvm=""; }

now_ns() { date +%s%N; }
perf_counter() { "$jcmd" "$jvm" PerfCounter.print | sed -n "s/^$1=//p"; }
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) {print "nan"; exit} m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f\n", m}'; }
# The largest stall (ms) whose probe woke up within [FROM, TO] (ns); 0 when none passed 0.2 ms.
worst_stall() { awk -v from="$1" -v to="$2" '$1 >= from && $1 <= to && $2 > m {m = $2} END {printf "%.2f\n", m / 1e6}' "$work/stalls"; }

take() {  # take METHOD: runs one dump; its output goes to $work/last-METHOD
  case $1 in
    print)    "$jcmd" "$jvm" Thread.print >"$work/last-print" ;;
    json)     "$jcmd" "$jvm" Thread.dump_to_file -overwrite -format=json "$work/last-json" >/dev/null ;;
    control)  "$jcmd" "$jvm" VM.version >/dev/null ;;
    lw-print) "$lockwatch" dump --pid "$jvm" --format print --timeout 60s >"$work/last-lw-print" ;;
    lw-json)  "$lockwatch" dump --pid "$jvm" --format json --timeout 60s >"$work/last-lw-json" ;;
  esac
}

measure() {  # measure METHOD: appends "stall_ms safepoint_ms wall_ms" to $work/m-METHOD
  local sp0 sp1 t0 t1
  sp0=$(perf_counter sun.rt.safepointTime)
  sleep 0.3  # the jcmd above is a JVM of its own: let its exit settle before the window opens
  t0=$(now_ns); take "$1"; t1=$(now_ns)
  sleep 0.3  # the probe logs a stall when it wakes up: give the last one time to arrive
  sp1=$(perf_counter sun.rt.safepointTime)
  echo "$(worst_stall "$t0" "$((t1 + 20000000))") $(awk -v a="$sp0" -v b="$sp1" -v f="$freq" 'BEGIN {printf "%.2f", (b - a) / f * 1000}') $(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", (b - a) / 1e6}')" >>"$work/m-$1"
}

echo "starting the JVM: $platform platform and $virtual virtual threads ($("$jdk/bin/java" -version 2>&1 | head -1))"
start_jvm "$platform" "$virtual" "$work/stalls"
sleep 5  # start-up compilation and the first GCs out of the way
freq=$(perf_counter sun.os.hrt.frequency)
methods=(print json control)
if "$lockwatch" dump --pid "$jvm" --format json --timeout 60s >/dev/null 2>&1; then
  methods+=(lw-print lw-json)
else
  echo "note: this lockwatch has no working 'dump --format json': its own attach client is not measured"
fi
take print; take json  # the attach listener is started, every path warmed once
for i in $(seq "$rounds"); do
  n=${#methods[@]}
  for k in $(seq 0 $((n - 1))); do measure "${methods[$(( (i + k) % n ))]}"; done
done
threads_print=$(grep -c '^"' "$work/last-print")
threads_json=$(grep -c '"tid"' "$work/last-json")
bytes_print=$(wc -c <"$work/last-print")
bytes_json=$(wc -c <"$work/last-json")
cp "$work/last-print" "$work/sample-print.txt"; cp "$work/last-json" "$work/sample.json"
stop_jvm

echo
echo "per dump, medians of $rounds rounds (worst stall: the probe's largest oversleep of a 1 ms sleep in the dump's window):"
printf "  %-9s %16s %14s %10s\n" method "worst stall ms" "safepoint ms" "wall ms"
for m in "${methods[@]}"; do
  printf "  %-9s %16s %14s %10s\n" "$m" "$(cut -d' ' -f1 "$work/m-$m" | median)" "$(cut -d' ' -f2 "$work/m-$m" | median)" "$(cut -d' ' -f3 "$work/m-$m" | median)"
done
col_median() { cut -d' ' -f"$2" "$work/m-$1" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "inf"}'; }
echo "  dumps: print $threads_print thread entries, $bytes_print bytes; json $threads_json thread entries, $bytes_json bytes"
echo "  json / print: worst stall $(ratio "$(col_median json 1)" "$(col_median print 1)")x (goal <= 0.5x)," \
     "safepoint $(ratio "$(col_median json 2)" "$(col_median print 2)")x, wall $(ratio "$(col_median json 3)" "$(col_median print 3)")x"
if [ -f "$work/m-lw-json" ]; then
  echo "  lockwatch dump json / print: worst stall $(ratio "$(col_median lw-json 1)" "$(col_median lw-print 1)")x," \
       "wall $(ratio "$(col_median lw-json 3)" "$(col_median lw-print 3)")x"
fi

# lockwatch's CPU per sample, in process, median of 5 repetitions: BM_DaemonSample is what the
# daemon does with a reply (parsed whole, correlated); BM_ParseAnalyze is `lockwatch analyze`'s
# way (the file fed in 64 KiB chunks).
cpu_ms() {  # cpu_ms BENCHMARK FILE: its median CPU time in ms
  LOCKWATCH_BENCH_INPUT="$2" "$bench" --benchmark_filter="$1\$" --benchmark_repetitions=5 \
    --benchmark_report_aggregates_only=true 2>/dev/null | awk -v b="$1_median" '$1 == b {print $4}'
}
per_thread() { awk -v c="$1" -v n="$2" 'BEGIN {printf "%.2f", c * 1000 / n}'; }
echo
echo "lockwatch CPU per sample (in process, median of 5 repetitions):"
for b in BM_DaemonSample BM_ParseAnalyze; do
  cp=$(cpu_ms "$b" "$work/sample-print.txt"); cj=$(cpu_ms "$b" "$work/sample.json")
  pp=$(per_thread "$cp" "$threads_print"); pj=$(per_thread "$cj" "$threads_json")
  echo "  $b: print ${cp} ms / $threads_print threads = ${pp} us per thread; json ${cj} ms / $threads_json threads = ${pj} us per thread;" \
       "json / print per thread $(ratio "$pj" "$pp")x (goal <= 2x)"
done
: >"$work/time-json"
for _ in 1 2 3; do /usr/bin/time -f "%U %S %M" -a -o "$work/time-json" "$lockwatch" analyze --format json "$work/sample.json" >/dev/null; done
echo "  lockwatch analyze on the JSON dump (whole process, median of 3): CPU $(awk '{print ($1 + $2) * 1000}' "$work/time-json" | median) ms," \
     "peak RSS $(awk '{print $3 / 1024}' "$work/time-json" | median) MiB"

echo
echo "starting a JVM with $big_virtual virtual threads for the peak-RSS figure ..."
start_jvm 10 "$big_virtual" "$work/stalls-big"
sleep 5
"$jcmd" "$jvm" Thread.dump_to_file -overwrite -format=json "$work/big.json" >/dev/null
stop_jvm
: >"$work/time-big"
for _ in 1 2 3; do /usr/bin/time -f "%U %S %M" -a -o "$work/time-big" "$lockwatch" analyze --format json "$work/big.json" >/dev/null; done
echo "  JSON dump of $(grep -c '"tid"' "$work/big.json") threads, $(wc -c <"$work/big.json") bytes:" \
     "lockwatch analyze peak RSS $(awk '{print $3 / 1024}' "$work/time-big" | median) MiB," \
     "CPU $(awk '{print ($1 + $2) * 1000}' "$work/time-big" | median) ms (median of 3)"
