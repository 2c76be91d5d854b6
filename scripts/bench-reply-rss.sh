#!/usr/bin/env bash
# Peak RSS (VmHWM) of `lockwatch run` while it samples one fake JVM whose every reply is a
# large honest Thread.print (tests/hostile/fake_jvm.cpp --mode ok --threads N, 20 000 threads
# is ~7.8 MB), for one or more daemons in the same run, interleaved round by round, medians
# printed. With a baseline daemon built from another commit it shows what streaming the reply
# into the parser and the ring saves.
#
#   scripts/bench-reply-rss.sh [--threads N] [--rounds N] DAEMON [DAEMON...]
set -euo pipefail
cd "$(dirname "$0")/.."
threads=20000 rounds=5
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --) shift; break ;;
    -*) echo "usage: scripts/bench-reply-rss.sh [--threads N] [--rounds N] DAEMON [DAEMON...]" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || set -- build/release/daemon/app/lockwatch
fake=build/release/tests/lockwatch_fake_jvm
[ -x "$fake" ] || cmake --build build/release --target lockwatch_fake_jvm lockwatch >/dev/null

work=$(mktemp -d /tmp/lockwatch-bench-rss.XXXXXX)
"$fake" --mode ok --threads "$threads" --label rss >"$work/fake.out" 2>&1 &
fpid=$!
trap 'kill $fpid 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do grep -q READY "$work/fake.out" && break; sleep 0.1; done
cat >"$work/cfg.yaml" <<YAML
interval: 1s
ring:
  samples: 4
incidents:
  enabled: false
log:
  level: warn
YAML
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
for r in $(seq "$rounds"); do
  i=0
  for d in "$@"; do
    i=$((i + 1))
    "$d" run --config "$work/cfg.yaml" --pid "$fpid" --listen 127.0.0.1:0 >"$work/d.out" 2>&1 &
    dpid=$!
    url=""
    for _ in $(seq 100); do url=$(grep -o 'http://[^ ]*/metrics' "$work/d.out" || true); [ -n "$url" ] && break; sleep 0.1; done
    n=0
    for _ in $(seq 300); do  # until 4 ok samples
      n=$(curl -s "$url" | awk '/^lockwatch_samples_total.*result="ok"/ { s += $NF } END { print s + 0 }')
      [ "${n%.*}" -ge 4 ] && break; sleep 0.2
    done
    hwm=$(awk '/VmHWM/ { print $2 }' /proc/$dpid/status)
    kill $dpid; wait $dpid 2>/dev/null || true
    echo "$hwm" >>"$work/peak.$i"
    echo "round $r  $d  ok=$n  peak_kib=$hwm"
  done
done
i=0
first=""
for d in "$@"; do
  i=$((i + 1))
  m=$(median <"$work/peak.$i")
  [ -z "$first" ] && first=$m
  awk -v d="$d" -v m="$m" -v f="$first" 'BEGIN {printf "median peak RSS %-50s %8.1f MiB  (%.2fx the first)\n", d, m/1024, m/f}'
done
