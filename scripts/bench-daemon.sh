#!/usr/bin/env bash
# The daemon's own costs on a 1000-thread JVM (bench/java/ThousandThreads.java, 100 of its
# threads changing their stacks all the time), sampled at 10 Hz until the ring holds 600 dumps
# (--churning 0 --interval 200ms: the steady JVM sampled at 5 Hz):
#   - RSS of the whole daemon with the full ring, against the raw text it holds;
#   - CPU per sample, against the JVM's own safepoint time per dump (hsperfdata), while the ring
#     fills and then for --steady seconds with the ring full (each sample evicts the oldest),
#     also window by window (--window seconds each): the median window and the spread, so that
#     one burst of load from elsewhere on the machine moves the spread, not the median;
#   - each thread's CPU, waits and preemptions per sample, and the io thread's against what a
#     plain blocking reader spends on the same replies (bench/attach_read_floor, run after), and
#     a reader that hands its chunks to a second thread as the daemon does (the floor of parsing
#     while the reply streams);
#   - /metrics latency at 50 req/s while sampling, against /healthz on the same server: the
#     two alternate in --rounds slices of --seconds/--rounds each, so that a burst of load from
#     elsewhere on the machine hits one slice and not a whole endpoint; the figures are the
#     medians over the slices.
# Shared, noisy machines: the figures that matter are the ratios measured in this one run.
#
#   scripts/bench-daemon.sh [--threads N] [--samples N] [--churning N] [--interval D] [--steady S] [--window S] [--seconds S] [--rounds N]
#   LOCKWATCH=BINARY scripts/bench-daemon.sh ...   # another build (a baseline), lockwatch-daemon beside it
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/thousand-threads.sh

threads=1000 samples=600 churning=100 interval=100ms seconds=20 rounds=4 steady=20 window=10
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --churning) churning=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --steady) steady=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "usage: scripts/bench-daemon.sh [--threads N] [--samples N] [--churning N] [--interval D] [--steady S] [--window S] [--seconds S] [--rounds N]" >&2; exit 2 ;;
  esac
done

scripts/deps.sh >/dev/null
cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOCKWATCH_BUILD_TESTS=OFF -DLOCKWATCH_BUILD_BENCH=ON >/dev/null
cmake --build build/bench --target lockwatch http_load attach_read_floor >/dev/null
lockwatch=${LOCKWATCH:-build/bench/daemon/app/lockwatch}
load=build/bench/bench/http_load
read_floor=build/bench/bench/attach_read_floor
work=$(mktemp -d /tmp/lockwatch-bench-daemon.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

thousand_threads "$work" 256 -- "$threads" 0 3600 "$churning"
pids+=("$jvm")

cat >"$work/lockwatch.yaml" <<EOF
interval: $interval
ring:
  samples: $samples
  max_bytes: 1GiB   # the count bound alone: measure what $samples dumps really cost
incidents:
  enabled: false
log:
  level: warn
EOF
"$lockwatch" run --config "$work/lockwatch.yaml" --pid "$jvm" --listen 127.0.0.1:0 >"$work/lockwatch.out" &
daemon=$!
pids+=("$daemon")
for _ in $(seq 100); do grep -q /metrics "$work/lockwatch.out" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*/metrics' "$work/lockwatch.out")
base=${url%/metrics}

metric() { curl -s "$url" | awk -v m="$1" 'index($0, m) == 1 { s += $NF } END { print s + 0 }'; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
# Each thread of the daemon: "tid ns-on-CPU voluntary-switches involuntary-switches"
# (schedstat counts nanoseconds, where /proc/PID/stat counts clock ticks). A voluntary switch
# is a wait (for the socket, a post, a timer); an involuntary one, the core taken by another
# runnable thread - on a 2-core machine mostly the JVM's.
threads_now() {
  for t in /proc/"$daemon"/task/*; do
    echo "${t##*/} $(awk '{ print $1 }' "$t/schedstat")" \
         "$(awk '/^voluntary_ctxt/ { v = $2 } /^nonvoluntary_ctxt/ { n = $2 } END { print v, n }' "$t/status")"
  done
}

echo "waiting for the ring to hold $samples dumps of $threads (+$churning churning) threads, one every $interval..."
cpu0=$(cpu_ticks "$daemon"); ok0=$(metric 'lockwatch_samples_total{result="ok"')
safepoint0=$(metric lockwatch_jvm_safepoint_seconds_total)
while [ "$(metric lockwatch_ring_samples)" -lt "$samples" ]; do sleep 2; done
cpu1=$(cpu_ticks "$daemon"); ok1=$(metric 'lockwatch_samples_total{result="ok"')
safepoint1=$(metric lockwatch_jvm_safepoint_seconds_total)

# The sample count and the JVM's safepoint time of one publication of /metrics: "ok seconds".
published() {
  curl -s "$url" | awk 'index($0, "lockwatch_samples_total{result=\"ok\"") == 1 { ok += $NF }
                        index($0, "lockwatch_jvm_safepoint_seconds_total") == 1 { sp += $NF }
                        END { printf "%d %.9f\n", ok, sp }'
}
# /metrics is published at most once a second, right after a sample is processed: a window's
# figures are read just after a publication (polled every 0.1 s, a few renders), so the samples
# counted and the CPU read belong to the same stretch of time.
aligned() {
  local before now
  before=$(published)
  for _ in $(seq 20); do
    sleep 0.1
    now=$(published)
    [ "${now%% *}" != "${before%% *}" ] && break
  done
  echo "$now"
}
# All threads' CPU in nanoseconds (schedstat): a window of a few seconds is a few hundred clock ticks.
cpu_ns() { cat /proc/"$daemon"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s }'; }

echo "the ring is full: $steady s more in windows of $window s, each sample evicting the oldest..."
read -r ok2 safepoint2 <<<"$(aligned)"; cpu2=$(cpu_ticks "$daemon"); threads_now >"$work/threads.2"
win_ok=$ok2 win_sp=$safepoint2 win_cpu=$(cpu_ns)
: >"$work/windows"
end=$((SECONDS + steady))
pause=$(awk -v w="$window" 'BEGIN { print (w > 0.5) ? w - 0.5 : w }')  # aligned() takes the rest
while [ "$SECONDS" -lt "$end" ]; do
  sleep "$pause"
  read -r ok_now sp_now <<<"$(aligned)"; cpu_now=$(cpu_ns)
  # "ms of daemon CPU per sample, ms of JVM safepoint per dump"
  [ "$ok_now" -gt "$win_ok" ] && awk -v c=$((cpu_now - win_cpu)) -v n=$((ok_now - win_ok)) -v s0="$win_sp" -v s1="$sp_now" \
    'BEGIN { printf "%.4f %.4f\n", c / 1e6 / n, 1000 * (s1 - s0) / n }' >>"$work/windows"
  win_ok=$ok_now win_sp=$sp_now win_cpu=$cpu_now
done
ok3=$win_ok safepoint3=$win_sp; cpu3=$(cpu_ticks "$daemon"); threads_now >"$work/threads.3"
# Median and range of the windows: "cpu-median cpu-min cpu-max ratio-median ratio-min ratio-max pause-median count"
windows=$(awk '{ c[NR] = $1; r[NR] = $1 / $2; p[NR] = $2 }
  function median(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
  END { if (NR == 0) exit; cm = median(c, NR); cl = c[1]; ch = c[NR]; rm = median(r, NR); rl = r[1]; rh = r[NR]
        printf "%.2f %.2f %.2f %.3f %.3f %.3f %.2f %d", cm, cl, ch, rm, rl, rh, median(p, NR), NR }' "$work/windows")
# The io thread is the main one; the processing thread is the busiest of the others.
per_thread=$(join "$work/threads.2" "$work/threads.3" | awk -v io="$daemon" -v n=$((ok3 - ok2)) '
  { cpu = ($5 - $2) / 1e6 / n; cs = sprintf("%.1f waits, %.1f preempted", ($6 - $3) / n, ($7 - $4) / n)
    if ($1 == io) { io_cpu = cpu; io_cs = cs } else if (cpu > p_cpu) { p_cpu = cpu; p_cs = cs } }
  END { if (n > 0) printf "io thread %.2f ms (%s), processing thread %.2f ms (%s)", io_cpu, io_cs, p_cpu, p_cs }')
io_ms=$(echo "$per_thread" | awk '{ print $3 }')

# The io thread's floor: what a plain blocking reader spends copying the same replies off the
# socket, with the daemon's pause between them (its dumps pause the JVM too, after the
# figures above were taken).
interval_ms=$(awk -v i="$interval" 'BEGIN { n = i + 0; print (i ~ /ms$/) ? n : (i ~ /s$/) ? n * 1000 : n }')
floor_dumps=21
floor=$("$read_floor" --pid "$jvm" --dumps "$floor_dumps" --interval-ms "$interval_ms" | awk '{ print $1 }')
# The same with the daemon's chunks (service/chunk_pool.hpp: 1 MiB, 3 kept) handed, once full,
# to a thread that reads them through: what parsing on another thread adds to the reads.
chunk_kib=1024 chunks=3
floor_handed=$("$read_floor" --pid "$jvm" --dumps "$floor_dumps" --interval-ms "$interval_ms" --buffer-kib "$chunk_kib" --hand-over "$chunks" | awk '{ print $1 }')

rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$daemon/status")
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$daemon/status")
ring=$(metric lockwatch_ring_bytes)
raw=$(curl -s "$base/api/v1/targets/ThousandThreads/samples" | grep -o '"bytes":[0-9]*' | awk -F: '{ s += $2 } END { print s }')
missed=$(metric lockwatch_missed_ticks_total)

slice=$(awk -v s="$seconds" -v r="$rounds" 'BEGIN { print s / r }')
echo "/metrics and /healthz under load, alternating in $rounds slices of $slice s each at 50 req/s..."
# "latency ms  p50 X  p90 Y  p99 Z  max W"
p() { awk -v k="$2" '$1 == "latency" { for (i = 3; i < NF; i += 2) if ($i == k) print $(i + 1) }' "$1"; }
for r in $(seq "$rounds"); do
  "$load" --url "$url" --rate 50 --seconds "$slice" >"$work/metrics.$r.txt"
  "$load" --url "$base/healthz" --rate 50 --seconds "$slice" >"$work/healthz.$r.txt"
  echo "  slice $r: /metrics p50 $(p "$work/metrics.$r.txt" p50) p99 $(p "$work/metrics.$r.txt" p99) ms," \
       "/healthz p50 $(p "$work/healthz.$r.txt" p50) p99 $(p "$work/healthz.$r.txt" p99) ms"
done
# The median over the slices of one percentile of one endpoint.
median() { for r in $(seq "$rounds"); do p "$work/$1.$r.txt" "$2"; done | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

awk -v rss="$rss" -v hwm="$hwm" -v ring="$ring" -v raw="$raw" -v n="$samples" \
    -v cpu=$((cpu1 - cpu0)) -v hz="$hz" -v ok=$((ok1 - ok0)) -v sp0="$safepoint0" -v sp1="$safepoint1" -v missed="$missed" \
    -v cpu_full=$((cpu3 - cpu2)) -v ok_full=$((ok3 - ok2)) -v sp2="$safepoint2" -v sp3="$safepoint3" \
    -v m50="$(median metrics p50)" -v m99="$(median metrics p99)" \
    -v h50="$(median healthz p50)" -v h99="$(median healthz p99)" -v rounds="$rounds" -v per_thread="$per_thread" \
    -v floor="$floor" -v floor_handed="$floor_handed" -v chunk_kib="$chunk_kib" -v floor_dumps="$floor_dumps" -v io_ms="$io_ms" -v windows="$windows" -v window="$window" 'BEGIN {
  printf "ring:     %d dumps, raw text %.1f MiB, stored %.1f MiB (%.1f%% of the text)\n", n, raw / 1048576, ring / 1048576, 100 * ring / raw
  printf "memory:   daemon RSS %.1f MiB (peak %.1f MiB) with the full ring; goal <= 32 MiB\n", rss / 1024, hwm / 1024
  cpu_ms = 1000 * cpu / hz / ok; pause_ms = 1000 * (sp1 - sp0) / ok
  printf "cpu:      %.2f ms of daemon CPU per sample (%d samples, %d missed ticks); JVM safepoint %.2f ms per dump (ratio %.2f)\n", cpu_ms, ok, missed, pause_ms, cpu_ms / pause_ms
  if (ok_full > 0) {
    full_ms = 1000 * cpu_full / hz / ok_full; full_pause = 1000 * (sp3 - sp2) / ok_full
    printf "cpu full: %.2f ms of daemon CPU per sample with the ring full (%d samples); JVM safepoint %.2f ms per dump (ratio %.2f)\n", full_ms, ok_full, full_pause, full_ms / full_pause
    printf "threads:  per sample with the ring full: %s\n", per_thread
  }
  if (split(windows, w, " ") == 8)
    printf "windows:  %d of %s s with the ring full: daemon CPU per sample median %.2f ms (%.2f-%.2f), JVM safepoint median %.2f ms, ratio median %.3f (%.3f-%.3f; goal <= 0.10)\n", w[8], window, w[1], w[2], w[3], w[7], w[4], w[5], w[6]
  if (floor != "") printf "io floor: a plain blocking reader spends %.2f ms of CPU per reply of this JVM (median of %d); the io thread %.2f ms per sample (%.1fx)\n", floor, floor_dumps, io_ms, io_ms / floor
  if (floor_handed != "") printf "          handing %d KiB chunks to a reading thread as the daemon does: %.2f ms (the io thread %.1fx)\n", chunk_kib, floor_handed, io_ms / floor_handed
  printf "/metrics: p50 %.2f ms, p99 %.2f ms at 50 req/s while sampling (medians of %d slices; goal p99 <= 5 ms)\n", m50, m99, rounds
  printf "/healthz: p50 %.2f ms, p99 %.2f ms (same server, trivial handler); /metrics p50 is %.2fx, p99 is %.2fx (goal p99 <= 1.5x)\n", h50, h99, m50 / h50, m99 / h99
}'
