#!/usr/bin/env bash
# Parser throughput on 100+ MB of real thread dumps, against `wc -l` on the same files.
#
# Builds Release in build-bench, fills a temporary directory by repeating the real dumps
# (the public corpus and tests/golden/captured), then alternates `wc -l` and
# `lockwatch analyze --format json` 7 times and prints medians, MB/s and their ratio,
# the peak RSS of lockwatch, and the in-process benchmarks (lockwatch_bench) on the
# same bytes.
#
# Environment: LOCKWATCH_CORPUS_DIR (default: ../shared/corpus/public next to the repo),
# BENCH_MB (minimum data size in MiB, default 100), JOBS (build parallelism, default 1).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$repo/build-bench"
corpus=${LOCKWATCH_CORPUS_DIR:-$repo/../shared/corpus/public}
captured="$repo/tests/golden/captured"
min_bytes=$(( ${BENCH_MB:-100} * 1024 * 1024 ))
rounds=7

log() { printf '%s\n' "$*"; }
die() { printf 'bench-parse.sh: %s\n' "$*" >&2; exit 1; }

build_release() {
    local out
    out=$(mktemp)
    if ! { cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release \
               -DLOCKWATCH_BUILD_BENCH=ON -DLOCKWATCH_BUILD_TESTS=OFF \
               -DLOCKWATCH_CORPUS_DIR="$corpus" &&
           cmake --build "$build" -j "${JOBS:-1}" --target lockwatch lockwatch_bench; } >"$out" 2>&1; then
        cat "$out" >&2
        die "build failed"
    fi
    rm -f "$out"
}

# The real dumps to repeat: every file of the corpus and of the captured set.
source_files() {
    [[ -d $corpus ]] && find "$corpus" -type f
    [[ -d $captured ]] && find "$captured" -type f -not -name '.*'
    return 0
}

# Copies the sources round after round (whole rounds) until there are min_bytes.
assemble() {
    local dir=$1 round=0 total=0 f size
    local -a sources
    mapfile -t sources < <(source_files | sort)
    (( ${#sources[@]} > 0 )) || die "no dumps in $corpus or $captured"
    while (( total < min_bytes )); do
        round=$((round + 1))
        for f in "${sources[@]}"; do
            # Flattened names keep captured/<jdk>/<scenario>/dump-1.txt apart.
            cp "$f" "$dir/$(printf 'r%03d' "$round")-$(echo "${f#"$repo"/}" | tr '/' '_')"
            size=$(stat -c %s "$f")
            total=$((total + size))
        done
    done
    log "data: ${#sources[@]} real dump files x $round rounds = $(find "$dir" -type f | wc -l) files, $total bytes ($(awk -v b="$total" 'BEGIN { printf "%.1f", b / 1e6 }') MB) in $dir"
}

now_ns() { date +%s%N; }

# Runs "$@" once and prints its wall time in nanoseconds.
time_ns() {
    local start end
    start=$(now_ns)
    "$@" >/dev/null
    end=$(now_ns)
    echo $((end - start))
}

median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }
mb_per_s() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.1f", b * 1000 / ns }'; }
ms() { awk -v ns="$1" 'BEGIN { printf "%.1f", ns / 1e6 }'; }

run_wc() { wc -l "${files[@]}"; }
run_lockwatch() { "$build/daemon/app/lockwatch" analyze --format json "${files[@]}" 2>/dev/null; }

peak_rss() {
    if [[ -x /usr/bin/time ]]; then
        local out
        out=$(mktemp)
        /usr/bin/time -f %M -o "$out" "$build/daemon/app/lockwatch" analyze --format json "${files[@]}" >/dev/null 2>&1
        log "peak RSS of lockwatch analyze: $(awk '{ printf "%.1f MB (%d KiB)", $1 / 1024, $1 }' "$out")"
        rm -f "$out"
    else
        log "peak RSS of lockwatch analyze: /usr/bin/time not available"
    fi
}

compare_with_wc() {
    local bytes=$1 i wc_runs=() lw_runs=()
    # One untimed run first: checks that lockwatch accepts the data and warms the page cache.
    run_lockwatch >/dev/null || die "lockwatch analyze failed on the data"
    for ((i = 0; i < rounds; i++)); do
        wc_runs+=("$(time_ns run_wc)")
        lw_runs+=("$(time_ns run_lockwatch)")
    done
    local wc_med lw_med
    wc_med=$(median "${wc_runs[@]}")
    lw_med=$(median "${lw_runs[@]}")
    log "Medians of $rounds alternating runs on a shared 2-core machine (wall clock, date +%s%N):"
    printf '  %-32s %9s ms %9s MB/s\n' "wc -l" "$(ms "$wc_med")" "$(mb_per_s "$bytes" "$wc_med")"
    printf '  %-32s %9s ms %9s MB/s\n' "lockwatch analyze --format json" "$(ms "$lw_med")" \
        "$(mb_per_s "$bytes" "$lw_med")"
    log "  ratio (lockwatch speed / wc -l speed): $(awk -v a="$wc_med" -v b="$lw_med" 'BEGIN { printf "%.3f", a / b }')"
    log "  every run (ms), wc -l:     $(for t in "${wc_runs[@]}"; do printf '%s ' "$(ms "$t")"; done)"
    log "  every run (ms), lockwatch: $(for t in "${lw_runs[@]}"; do printf '%s ' "$(ms "$t")"; done)"
}

run_microbench() {
    local dir=$1 out="$build/bench-parse.log"
    LOCKWATCH_BENCH_INPUT="$dir" "$build/bench/lockwatch_bench" \
        --benchmark_repetitions=5 --benchmark_report_aggregates_only=true >"$out" 2>&1 \
        || { cat "$out" >&2; die "lockwatch_bench failed"; }
    log "lockwatch_bench on the same data, medians of 5 repetitions (full output: $out)."
    log "bytes_per_second is in binary units (M/s = MiB/s); MB/s is 10^6 bytes per CPU second:"
    grep -E '^Benchmark|_median' "$out" | sed 's/^/  /'
}

main() {
    log "building Release in $build ..."
    build_release
    data=$(mktemp -d "${TMPDIR:-/tmp}/lockwatch-bench.XXXXXX")
    trap 'rm -rf "$data"' EXIT
    assemble "$data"
    mapfile -t files < <(find "$data" -type f | sort)
    local bytes
    bytes=$(cat "${files[@]}" | wc -c)
    compare_with_wc "$bytes"
    peak_rss
    run_microbench "$data"
}

main "$@"
