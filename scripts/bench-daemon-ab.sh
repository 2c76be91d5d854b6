#!/usr/bin/env bash
# Two builds of the daemon sampling one 1000-thread JVM (bench/java/ThousandThreads.java, none
# of its threads churning) at the same time, each at --interval: the CPU per sample of each,
# window by window, and the ratio B/A of each window.
#
# Why it exists: scripts/bench-daemon.sh measures one build at a time, and on a shared machine
# the load from elsewhere moves a run's figure by 10-20% - more than most single changes win,
# so runs that alternate builds could not tell 5% from noise. Here both daemons sample the same
# JVM through the same windows: a burst of load hits both, and the ratio of each window stays.
# Their dumps take turns at the JVM's attach listener (one at a time); each daemon counts only
# its own CPU and its own samples. Run it twice with A and B swapped: a gap that follows the
# build, not the order they started in, is the change's.
#
#   scripts/bench-daemon-ab.sh DIR_A DIR_B [--windows N] [--window S] [--interval D] [--samples N]
#   DIR_A, DIR_B: each holds a build's lockwatch and lockwatch-daemon (build/bench/daemon/app
#   of two checkouts, say).
# Prints per window each daemon's CPU per sample, B/A, and the io and processing threads' CPU
# and waits per sample; then the medians.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/thousand-threads.sh

usage() { echo "usage: scripts/bench-daemon-ab.sh DIR_A DIR_B [--windows N] [--window S] [--interval D] [--samples N]" >&2; exit 2; }
[ $# -ge 2 ] || usage
dir_a=$1 dir_b=$2
shift 2
windows=12 window=10 interval=200ms samples=200
while [ $# -gt 0 ]; do
  case "$1" in
    --windows) windows=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    *) usage ;;
  esac
done
for d in "$dir_a" "$dir_b"; do
  if [ ! -x "$d/lockwatch" ] || [ ! -x "$d/lockwatch-daemon" ]; then echo "$d: no lockwatch and lockwatch-daemon in it" >&2; exit 2; fi
done

work=$(mktemp -d /tmp/lockwatch-bench-ab.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

thousand_threads "$work" 256 -- 1000 0 3600 0
pids+=("$jvm")

cat >"$work/lockwatch.yaml" <<EOF
interval: $interval
ring:
  samples: $samples
  max_bytes: 1GiB
incidents:
  enabled: false
log:
  level: warn
EOF
start() {  # start DIR NAME: the daemon's pid in $daemon, its /metrics in $work/NAME.url
  "$1/lockwatch" run --config "$work/lockwatch.yaml" --pid "$jvm" --listen 127.0.0.1:0 >"$work/$2.out" 2>&1 &
  daemon=$!
  pids+=("$daemon")
  for _ in $(seq 100); do grep -q /metrics "$work/$2.out" && break; sleep 0.1; done
  grep -o 'http://[^ ]*/metrics' "$work/$2.out" >"$work/$2.url" || { echo "$1: the daemon did not start" >&2; exit 1; }
}
start "$dir_a" a; daemon_a=$daemon
start "$dir_b" b; daemon_b=$daemon
url_a=$(cat "$work/a.url") url_b=$(cat "$work/b.url")

metric() { curl -s "$1" | awk -v m="$2" 'index($0, m) == 1 { s += $NF } END { printf "%d\n", s }'; }
# Each thread of a daemon, the io thread (the main one) first: "ns-on-CPU voluntary-switches" ...
threads() { for t in $(ls /proc/"$1"/task | sort -n); do
              echo "$(awk '{ print $1 }' /proc/"$1"/task/"$t"/schedstat) $(awk '/^voluntary_ctxt/ { print $2 }' /proc/"$1"/task/"$t"/status)"
            done; }

echo "waiting for both rings to hold $samples dumps, one every $interval each..."
while [ "$(metric "$url_a" lockwatch_ring_samples)" -lt "$samples" ] || [ "$(metric "$url_b" lockwatch_ring_samples)" -lt "$samples" ]; do
  sleep 2
done

# A daemon's ok samples and threads now: snapshot NAME PID URL K writes $work/NAME.ok.K, $work/NAME.K.
snapshot() { metric "$3" 'lockwatch_samples_total{result="ok"' >"$work/$1.ok.$4"; threads "$2" >"$work/$1.$4"; }
# "samples total-ns io-ns io-waits processing-ns processing-waits", each per sample, of daemon
# NAME between its snapshots 0 and 1 (just "0" without samples). The processing thread is the
# busiest after the io thread.
per() {
  local n=$(( $(cat "$work/$1.ok.1") - $(cat "$work/$1.ok.0") ))
  [ "$n" -gt 0 ] || { echo 0; return; }
  paste "$work/$1.0" "$work/$1.1" | awk -v n="$n" '
    { cpu = ($3 - $1) / n; w = ($4 - $2) / n; total += cpu
      if (NR == 1) { io = cpu; io_w = w } else if (cpu > p) { p = cpu; p_w = w } }
    END { printf "%d %d %d %.1f %d %.1f\n", n, total, io, io_w, p, p_w }'
}

: >"$work/ratios"
for i in $(seq "$windows"); do
  snapshot a "$daemon_a" "$url_a" 0; snapshot b "$daemon_b" "$url_b" 0
  sleep "$window"
  snapshot a "$daemon_a" "$url_a" 1; snapshot b "$daemon_b" "$url_b" 1
  read -r n_a a io_a wa p_a pa <<<"$(per a)"
  read -r n_b b io_b wb p_b pb <<<"$(per b)"
  if [ "$n_a" -le 0 ] || [ "$n_b" -le 0 ]; then echo "window $i: no samples"; continue; fi
  awk -v i="$i" -v a="$a" -v b="$b" -v ioa="$io_a" -v wa="$wa" -v pa_="$p_a" -v pwa="$pa" -v iob="$io_b" -v wb="$wb" -v pb_="$p_b" -v pwb="$pb" 'BEGIN {
    printf "window %2d: A %.2f ms  B %.2f ms per sample  B/A %.3f   (io %.2f/%.2f ms, %.1f/%.1f waits; processing %.2f/%.2f ms, %.1f/%.1f waits)\n",
           i, a / 1e6, b / 1e6, b / a, ioa / 1e6, iob / 1e6, wa, wb, pa_ / 1e6, pb_ / 1e6, pwa, pwb }'
  echo "$a $b" >>"$work/ratios"
done
awk 'function median(v, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
                                       return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }
     { a[NR] = $1; b[NR] = $2; r[NR] = $2 / $1 }
     END { if (NR == 0) exit 1
           printf "medians of %d windows: A %.2f ms, B %.2f ms per sample; B/A median %.3f (%.3f-%.3f)\n", NR, median(a, NR) / 1e6, median(b, NR) / 1e6, median(r, NR), r[1], r[NR] }' "$work/ratios"
