#!/usr/bin/env bash
# Soak: lockwatch run at 10 Hz on a contended 1000-thread JVM (bench/java/ThousandThreads.java,
# with churning threads) for a long time. Passes when, after the ring has filled, the daemon's
# RSS grows by less than 5 % plus the 4 MiB of free heap the daemon keeps for its next sample
# (its lowest reading in the last third of the run against the lowest in the first third), its
# open file descriptors stay flat, and no sample failed.
# CI runs a short version (scripts/test.sh: --seconds 60 --ring 100).
#
#   scripts/soak.sh [--seconds S] [--threads N] [--ring N] [--build DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/thousand-threads.sh

seconds=1800 threads=1000 ring=600 build=build/soak
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --ring) ring=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "usage: scripts/soak.sh [--seconds S] [--threads N] [--ring N] [--build DIR]" >&2; exit 2 ;;
  esac
done

if [ ! -x "$build/daemon/app/lockwatch" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCKWATCH_BUILD_TESTS=OFF -DLOCKWATCH_BUILD_BENCH=OFF >/dev/null
  cmake --build "$build" --target lockwatch >/dev/null
fi
lockwatch=$build/daemon/app/lockwatch
work=$(mktemp -d /tmp/lockwatch-soak.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

thousand_threads "$work" 256 -- "$threads" 0 $((seconds + 600)) 100
pids+=("$jvm")
jvm_started=$SECONDS  # at READY: an age counted from here is never more than the JVM's

cat >"$work/lockwatch.yaml" <<EOF
interval: 100ms
ring:
  samples: $ring
incidents:
  directory: $work/incidents
  blocked_threshold: $((threads / 4))
  min_interval: 1m
  max_bytes: 64MiB
log:
  level: warn
EOF
"$lockwatch" run --config "$work/lockwatch.yaml" --pid "$jvm" --listen 127.0.0.1:0 >"$work/lockwatch.out" &
daemon=$!
pids+=("$daemon")
for _ in $(seq 100); do grep -q /metrics "$work/lockwatch.out" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*/metrics' "$work/lockwatch.out")

metric() { curl -s "$url" | awk -v m="$1" 'index($0, m) == 1 { s += $NF } END { print s + 0 }'; }
# ok and all samples from one scrape: two scrapes can straddle a sample and count -1 failed.
samples() { curl -s "$url" | awk '/^lockwatch_samples_total/ { all += $NF; if (index($0, "result=\"ok\"")) ok += $NF }
  END { print ok + 0, all + 0 }'; }
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$daemon/status"; }
fds() { ls "/proc/$daemon/fd" | wc -l; }

while [ "$(metric lockwatch_ring_samples)" -lt "$ring" ]; do sleep 1; done
# The heap settles after the ring filled: the first incident written from a full ring (here
# ~60 MB of dump text, rendered one sample at a time) and the correlator's first table
# rebuilds leave a one-time step of ~2-3 MiB and a flat floor after it (later incidents add
# nothing: the daemon gives the heap back after each one - before it did, one could leave 1-2
# MiB more of the heap's top resident, and a 60 s run with an incident inside failed at +7.3%);
# measured from before the step, a short run would call it a leak. So the soak
# starts once that incident is written - min_interval after the first one, which comes with the
# first dumps - and 30 s have passed.
wait_until=$((SECONDS + 120))
while [ "$(metric lockwatch_incidents_total)" -lt 2 ] && [ $SECONDS -lt $wait_until ]; do sleep 1; done
sleep 30
# The ring keeps each header's numbers as varints, and `elapsed=` passes 163.84 s (2^14
# hundredths) in the JVM's first minutes: one more byte per thread per dump, ~0.7 MB for this
# ring - data, bounded by ring.max_bytes, not a leak. A long soak measures from after it.
if [ "$seconds" -ge 600 ]; then
  while [ $((SECONDS - jvm_started)) -lt 200 ]; do sleep 1; done
fi
rss0=$(rss) fds0=$(fds) start=$SECONDS
# Failures are counted over the soak itself: the first attach to a fresh JVM starts its
# listener, which a loaded machine can make slow, and that is not what a soak measures.
read -r ok0 all0 < <(samples)
echo "soak: ring full ($ring dumps of $threads threads); RSS ${rss0} KiB, ${fds0} fds; running ${seconds}s"
max_rss=$rss0 max_fds=$fds0 readings=() fd_readings=()
while [ $((SECONDS - start)) -lt "$seconds" ]; do
  sleep 1
  kill -0 "$daemon" 2>/dev/null || { echo "soak: FAIL - the daemon exited" >&2; exit 1; }
  r=$(rss) f=$(fds)
  readings+=("$r") fd_readings+=("$f")
  [ "$r" -gt "$max_rss" ] && max_rss=$r
  [ "$f" -gt "$max_fds" ] && max_fds=$f
  [ $(((SECONDS - start) % 10)) = 0 ] && echo "soak: t=$((SECONDS - start))s RSS ${r} KiB fds ${f} ring $(metric lockwatch_ring_bytes) bytes"
done
rss1=$(rss) fds1=$(fds)
read -r ok all < <(samples)
failed=$(( (all - all0) - (ok - ok0) ))
# Growth is the floor, not a peak: every reading may catch a 1.5 MB dump being parsed or an
# incident being written, and glibc returns the pages after it; a descriptor count may catch a
# sample's attach socket and JSON or hsperfdata file, a scrape's connection and an incident's file
# and directory (up to 5 at once). A leak raises the lowest value, so the lowest reading of the
# last third is compared with the lowest of the first third. floors READING...: "FIRST LAST".
floors() { printf '%s\n' "$@" | awk '{ v[NR] = $1 } END {
  n = int(NR / 3); if (n < 1) n = 1; a = v[1]; b = v[NR]
  for (i = 1; i <= n; i++) { if (v[i] < a) a = v[i]; if (v[NR - n + i] < b) b = v[NR - n + i] }
  print a, b }'; }
read -r rss_first rss_last < <(floors "${readings[@]}")
growth=$(awk -v a="$rss_first" -v b="$rss_last" 'BEGIN { printf "%+.1f", 100 * (b - a) / a }')
read -r fd_first fd_last < <(floors "${fd_readings[@]}")
# The floor of each tenth of the run: a leak climbs through all of them, a heap settling
# after the ring's first turns levels off.
echo "soak: RSS floor (KiB) per tenth of the run: $(printf '%s\n' "${readings[@]}" | awk '{ v[NR] = $1 } END {
  for (k = 0; k < 10; k++) { lo = 0; for (i = int(k * NR / 10) + 1; i <= int((k + 1) * NR / 10); i++) if (!lo || v[i] < lo) lo = v[i]; printf "%s ", lo }
}')"
echo "soak: outcomes: $(curl -s "$url" | grep '^lockwatch_samples_total' | sed 's/.*result="\([a-z_]*\)".* /\1=/' | tr '\n' ' ')"
echo "soak: ${seconds}s after the ring filled: RSS ${rss0} -> ${rss1} KiB (peak ${max_rss} KiB, floor ${growth}%), fds ${fds0} -> ${fds1} (peak ${max_fds}, floor ${fd_first} -> ${fd_last}), samples $((ok - ok0)) ok / ${failed} failed during the soak, $(metric lockwatch_missed_ticks_total) missed ticks"
# The daemon keeps up to 4 MiB of freed heap for the next sample (kKeptFreeHeap in
# daemon/service/src/daemon.cpp) and gives back the rest; which of those pages are resident
# depends on where the last dumps' buffers fell, so the RSS floor may sit anywhere in a 4 MiB
# band above what is in use without a byte leaked. A 60 s run with an incident written inside it
# stepped +2 MiB (+9.9%) at that incident and stayed flat for the rest: a step inside the band.
# The limit is 5% plus that band. A leak of 16 bytes per thread per sample exceeds it within the
# 60 s smoke (400 dumps of 1000 threads between its first third and its last); in the long soak
# the band is a smaller share.
kept_kib=4096
limit_kib=$(awk -v a="$rss_first" -v k="$kept_kib" 'BEGIN { printf "%d", a * 0.05 + k }')
grown_kib=$((rss_last - rss_first))
status=0
[ "$grown_kib" -lt "$limit_kib" ] || { echo "soak: FAIL - the RSS floor grew ${growth}% (${grown_kib} KiB) from the first third of the run to the last (limit ${limit_kib} KiB: 5% and the ${kept_kib} KiB of heap kept free)" >&2; status=1; }
[ "$fd_last" -le "$fd_first" ] || { echo "soak: FAIL - the descriptors' floor grew from ${fd_first} to ${fd_last}" >&2; status=1; }
[ "$max_fds" -le $((fds0 + 5)) ] || { echo "soak: FAIL - file descriptors peaked at ${max_fds}, ${fds0} at the start" >&2; status=1; }
[ "$failed" = 0 ] || { echo "soak: FAIL - ${failed} samples failed" >&2; status=1; }
[ $status = 0 ] && echo "soak: PASS"
exit $status
