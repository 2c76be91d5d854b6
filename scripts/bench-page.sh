#!/usr/bin/env bash
# How big the pages get and how long chromium takes to render them, for big inputs:
#   - `lockwatch analyze --format html` of one dump of 10 250 threads (500 hot locks, deep
#     Spring-like stacks with lambdas, proxies and CGLIB classes) and of 600 dumps;
#   - the daemon's live page `/` on a 1000-thread JVM once its ring holds 600 samples
#     (--live-threads, --live-samples for others, e.g. 10000 and 60).
# Render time, median of --runs runs of headless chromium at 1400x1000, two ways:
#   - in the page: from navigation start to the load event with layout done (a copy of the
#     page with a timer script added and its policy, which forbids that script, taken out);
#   - from outside: the wall time of a screenshot of the page minus that of a blank page
#     (chromium's own start-up), in alternating runs.
#
#   scripts/bench-page.sh [--runs N] [--no-live] [--live-threads N] [--live-samples N] [--build DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/thousand-threads.sh

runs=5 live=1 build=build/release live_threads=1000 live_samples=600
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --no-live) live=""; shift ;;
    --build) build=$2; shift 2 ;;
    --live-threads) live_threads=$2; shift 2 ;;
    --live-samples) live_samples=$2; shift 2 ;;
    *) echo "usage: scripts/bench-page.sh [--runs N] [--no-live] [--live-threads N] [--live-samples N] [--build DIR]" >&2; exit 2 ;;
  esac
done

command -v chromium >/dev/null || { echo "bench-page: chromium is not installed (scripts/deps.sh)" >&2; exit 1; }
[ -d "$build" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target lockwatch >/dev/null
lockwatch=$build/daemon/app/lockwatch
work=$(mktemp -d /tmp/lockwatch-bench-page.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT

# One jstack-format dump: `locks` hot locks, each with a holder and `waiters` waiters; even
# locks are monitors (holder known), odd ones ReentrantLocks (owner unknown without -l).
dump() {  # dump LOCKS WAITERS SEED
  awk -v locks="$1" -v waiters="$2" -v seed="$3" '
    function frame(m, file) { printf "\tat %s(%s.java:%d)\n", m, file, 10 + (id * 7 + seed) % 400 }
    function callers(k) {
      frame("com.example.shop.repo.OrderRepository$$Lambda$" (100 + id) "/0x0000000800c" sprintf("%05x", id) ".apply", "Unknown")
      frame("jdk.proxy2.$Proxy" (40 + k % 9) ".findAll", "Unknown")
      frame("com.example.shop.service.OrderService" (k % 40) "$$EnhancerBySpringCGLIB$$" sprintf("%06x", k * 7919) ".load", "OrderService")
      frame("com.example.shop.web.OrderController" (k % 20) ".handle", "OrderController")
      frame("jdk.internal.reflect.GeneratedMethodAccessor" (k % 13) ".invoke", "Unknown")
      frame("org.springframework.web.servlet.FrameworkServlet.service", "FrameworkServlet")
      frame("org.apache.catalina.core.ApplicationFilterChain.doFilter", "ApplicationFilterChain")
      frame("org.apache.catalina.core.StandardWrapperValve.invoke", "StandardWrapperValve")
      frame("org.apache.coyote.http11.Http11Processor.service", "Http11Processor")
      frame("org.apache.tomcat.util.net.NioEndpoint$SocketProcessor.doRun", "NioEndpoint")
      print "\tat java.util.concurrent.ThreadPoolExecutor.runWorker(java.base@17.0.21.1/ThreadPoolExecutor.java:1136)"
      print "\tat java.util.concurrent.ThreadPoolExecutor$Worker.run(java.base@17.0.21.1/ThreadPoolExecutor.java:635)"
      print "\tat java.lang.Thread.run(java.base@17.0.21.1/Thread.java:833)"
      print ""
    }
    function header(state, status) {
      id++
      printf "\"http-nio-8080-exec-%d\" #%d daemon prio=5 os_prio=0 cpu=12.00ms elapsed=300.00s tid=0x00007f%010x nid=0x%x %s  [0x00007f0000000000]\n", id, id + 20, id, id, status
      print "   java.lang.Thread.State: " state
    }
    BEGIN {
      print "2026-11-30 12:00:00"
      print "Full thread dump OpenJDK 64-Bit Server VM (17.0.21.1+2-1-deb12u1-Debian mixed mode, sharing):\n"
      for (l = 0; l < locks; l++) {
        addr = sprintf("0x00000000%08x", 2684354560 + l * 64)
        monitor = l % 2 == 0
        cls = monitor ? "com.example.shop.cache.PriceSegment" l : "java.util.concurrent.locks.ReentrantLock$NonfairSync"
        if (monitor) {
          header("TIMED_WAITING (sleeping)", "waiting on condition")
          print "\tat java.lang.Thread.sleep(java.base@17.0.21.1/Native Method)"
          frame("com.example.shop.cache.PriceSegment" l ".reload", "PriceSegment")
          frame("com.example.shop.cache.PriceSegment" l ".refresh", "PriceSegment")
          printf "\t- locked <%s> (a %s)\n", addr, cls
          callers(l)
        }
        n = seed == 0 ? waiters : waiters - (seed + l) % 3  # the one big dump: every lock alike
        for (w = 0; w < n; w++) {
          if (monitor) {
            header("BLOCKED (on object monitor)", "waiting for monitor entry")
            frame("com.example.shop.cache.PriceSegment" l ".refresh", "PriceSegment")
            printf "\t- waiting to lock <%s> (a %s)\n", addr, cls
          } else {
            header("WAITING (parking)", "waiting on condition")
            print "\tat jdk.internal.misc.Unsafe.park(java.base@17.0.21.1/Native Method)"
            printf "\t- parking to wait for  <%s> (a %s)\n", addr, cls
            print "\tat java.util.concurrent.locks.LockSupport.park(java.base@17.0.21.1/LockSupport.java:211)"
            print "\tat java.util.concurrent.locks.ReentrantLock.lock(java.base@17.0.21.1/ReentrantLock.java:322)"
            frame("com.example.shop.db.ConnectionPool" l ".borrow", "ConnectionPool")
          }
          callers(l * waiters + w)
        }
      }
      print "JNI global refs: 812, weak refs: 0\n"
    }'
}

ms_now() { date +%s%N | cut -c1-13; }
chromium_ms() {  # the wall time of one headless screenshot of URL
  local start end profile
  profile=$(mktemp -d "$work/profile.XXXXXX")
  start=$(ms_now)
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile" --window-size=1400,1000 \
    --screenshot="$work/shot.png" "$1" >/dev/null 2>&1
  end=$(ms_now)
  rm -rf "$profile"
  echo $((end - start))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2)) }'; }
# A copy of page FILE that times itself: its stylesheet inline, its own script and policy out,
# and at the load event a forced layout, then the time since navigation start in the title.
timed_copy() {  # timed_copy FILE CSS OUT
  awk -v css="$2" '
    /http-equiv="Content-Security-Policy"/ { next }
    /<link rel="stylesheet"/ { print "<style>"; while ((getline line < css) > 0) print line; print "</style>"; next }
    /<script src=/ { next }
    /<\/body>/ { print "<script>addEventListener(\"load\", function () { document.body.offsetHeight; document.title = \"rendered \" + Math.round(performance.now()); });</script>" }
    { print }' "$1" >"$3"
}
in_page_ms() {  # the time a timed copy reports
  local profile
  profile=$(mktemp -d "$work/profile.XXXXXX")
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$profile" --window-size=1400,1000 \
    --dump-dom "file://$1" 2>/dev/null | sed -n 's|.*<title>rendered \([0-9]*\)</title>.*|\1|p'
  rm -rf "$profile"
}
render() {  # render NAME FILE [URL]: FILE is the page's HTML; URL where chromium loads it (default: the file)
  local page=() blank=() diffs=() inside=() i
  timed_copy "$2" "$work/lockwatch.css" "$work/timed.html"
  for i in $(seq "$runs"); do
    inside+=("$(in_page_ms "$work/timed.html")")
    blank+=("$(chromium_ms "file://$work/blank.html")")
    page+=("$(chromium_ms "${3:-file://$2}")")
    diffs+=($((page[-1] - blank[-1])))
  done
  printf '%-30s in the page %4s ms to load and lay out; screenshot %4s ms more than a blank page (%s vs %s ms); medians of %s\n' "$1" \
    "$(printf '%s\n' "${inside[@]}" | median)" "$(printf '%s\n' "${diffs[@]}" | median)" \
    "$(printf '%s\n' "${page[@]}" | median)" "$(printf '%s\n' "${blank[@]}" | median)" "$runs"
}
size() { printf '%-34s %8s bytes, %s\n' "$1" "$(wc -c <"$2")" "$3"; }

echo '<!DOCTYPE html><html><head><title>blank</title></head><body></body></html>' >"$work/blank.html"
: >"$work/lockwatch.css"  # the report files carry theirs inline

echo "== inputs"
dump 500 20 0 >"$work/threads.txt"
echo "one dump: $(grep -c '^"' "$work/threads.txt") threads, $(wc -c <"$work/threads.txt") bytes"
for s in $(seq 600); do dump 10 $((2 + s % 17)) "$s"; done >"$work/samples.txt"
echo "600 dumps: $(grep -c '^"' "$work/samples.txt") thread entries, $(wc -c <"$work/samples.txt") bytes"

echo "== lockwatch analyze --format html"
for input in threads samples; do
  start=$(ms_now)
  "$lockwatch" analyze --format html "$work/$input.txt" >"$work/$input.html"
  size "$input.html" "$work/$input.html" "made in $(($(ms_now) - start)) ms"
done
render "threads.html (10 250 threads)" "$work/threads.html"
render "samples.html (600 dumps)" "$work/samples.html"

[ -n "$live" ] || exit 0
echo "== the live page on a $live_threads-thread JVM, ring of $live_samples samples"
thousand_threads "$work" 1024 -- "$live_threads" 0 3600 100
pids+=("$jvm")
printf 'interval: 100ms\nring:\n  samples: %s\n  max_bytes: 1GiB\nincidents:\n  enabled: false\nlog:\n  level: warn\n' "$live_samples" >"$work/lockwatch.yaml"
"$lockwatch" run --config "$work/lockwatch.yaml" --pid "$jvm" --listen 127.0.0.1:0 >"$work/lockwatch.out" &
pids+=($!)
for _ in $(seq 100); do grep -q /metrics "$work/lockwatch.out" && break; sleep 0.1; done
base=$(grep -o 'http://[^ ]*' "$work/lockwatch.out" | sed 's|/metrics||')
for _ in $(seq 1200); do
  n=$(curl -s "$base/api/v1/targets" | grep -o '"samples":[0-9]*' | cut -d: -f2 || true)
  [ "${n:-0}" -ge "$live_samples" ] && break
  sleep 0.5
done
echo "ring: ${n:-0} samples"
times=()
for _ in $(seq "$runs"); do times+=("$(curl -s -o "$work/live.html" -w '%{time_total}' "$base/?refresh=0" | awk '{ print int($1 * 1000) }')"); done
size "/ (live page)" "$work/live.html" "served in $(printf '%s\n' "${times[@]}" | median) ms (median of $runs)"
curl -s -o "$work/lockwatch.css" "$base/assets/lockwatch.css"
render "/ (live page)" "$work/live.html" "$base/?refresh=0"
