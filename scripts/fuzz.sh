#!/usr/bin/env bash
# Fuzzes the dump parser with libFuzzer (clang, ASan + UBSan).
#
# Builds lockwatch_dump_parser_fuzzer in build-fuzz, seeds a working corpus outside the
# repository (build-fuzz/corpus) from tests/fuzz/corpus/dump_parser and the real dumps,
# runs the fuzzer, and copies any crash into tests/fuzz/crashes/dump_parser/ (replayed by
# the ctest fuzz.replay.dump_parser from then on). Exits non-zero on a crash.
#
# usage: scripts/fuzz.sh [--runs N] [--seconds S]
#   --runs N      stop after N executions (default 10000000)
#   --seconds S   stop after S seconds, whichever comes first (default: no time limit)
#   --max-len B   longest input in bytes (default 4096: real dumps are cut to their first
#                 4 KiB, which keeps thousands of executions a second; 65536 for deep runs)
# Environment: LOCKWATCH_CORPUS_DIR (real dumps; default ../shared/corpus/public next to
# the repo), LOCKWATCH_SOURCE_DIR (CMake source tree; default the repo), JOBS (default 1).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source_dir=${LOCKWATCH_SOURCE_DIR:-$repo}
build="$repo/build-fuzz"
corpus=${LOCKWATCH_CORPUS_DIR:-$repo/../shared/corpus/public}
seeds="$repo/tests/fuzz/corpus/dump_parser"
crashes="$repo/tests/fuzz/crashes/dump_parser"
captured="$repo/tests/golden/captured"
work="$build/corpus"
artifacts="$build/artifacts"
fuzzer="$build/tests/fuzz/lockwatch_dump_parser_fuzzer"
runs=10000000
seconds=0
max_len=4096

log() { printf '%s\n' "$*"; }
die() { printf 'fuzz.sh: %s\n' "$*" >&2; exit 2; }
usage() { sed -n 's/^# \{0,1\}//; 9,15p' "${BASH_SOURCE[0]}"; }

parse_args() {
    while (( $# )); do
        case $1 in
            --runs) [[ ${2:-} =~ ^[0-9]+$ ]] || die "--runs takes a number"; runs=$2; shift 2 ;;
            --seconds) [[ ${2:-} =~ ^[0-9]+$ ]] || die "--seconds takes a number"; seconds=$2; shift 2 ;;
            --max-len) [[ ${2:-} =~ ^[0-9]+$ ]] || die "--max-len takes a number"; max_len=$2; shift 2 ;;
            -h|--help) usage; exit 0 ;;
            *) usage >&2; exit 2 ;;
        esac
    done
}

build_fuzzer() {
    CC=clang CXX=clang++ cmake -S "$source_dir" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DLOCKWATCH_BUILD_FUZZERS=ON -DLOCKWATCH_BUILD_TESTS=ON -DLOCKWATCH_BUILD_BENCH=OFF \
        -DLOCKWATCH_CORPUS_DIR="$corpus" >/dev/null
    [[ -d $build/tests/fuzz ]] || die "tests/fuzz is not in the build: tests/CMakeLists.txt must add_subdirectory(fuzz)"
    cmake --build "$build" -j "${JOBS:-1}" --target lockwatch_dump_parser_fuzzer
}

# Copies files into the working corpus under flattened names (captured dumps share names).
seed_from() {
    local root=$1 f
    [[ -d $root ]] || return 0
    while IFS= read -r -d '' f; do
        cp -n "$f" "$work/seed-$(echo "${f#"$root"/}" | tr '/' '_')"
    done < <(find "$root" -type f -not -name '.*' -not -name '*.md' -print0)
}

seed_corpus() {
    mkdir -p "$work"
    seed_from "$seeds"
    seed_from "$crashes"
    seed_from "$corpus"
    seed_from "$captured"
    log "working corpus: $work ($(find "$work" -type f | wc -l) files)"
}

run_fuzzer() {
    local -a args=(-runs="$runs" -max_len="$max_len" -rss_limit_mb=2048 -timeout=30
                   -print_final_stats=1 -artifact_prefix="$artifacts/")
    (( seconds > 0 )) && args+=(-max_total_time="$seconds")
    rm -rf "$artifacts"
    mkdir -p "$artifacts"
    log "running: $fuzzer ${args[*]} $work"
    set +e
    UBSAN_OPTIONS=print_stacktrace=1 "$fuzzer" "${args[@]}" "$work" 2>&1 | tee "$build/fuzz.log"
    status=${PIPESTATUS[0]}
    set -e
}

# libFuzzer writes crash-*, leak-*, timeout-* and oom-* files; all are findings.
collect_crashes() {
    local f
    found=0
    for f in "$artifacts"/*; do
        [[ -f $f ]] || continue
        cp "$f" "$crashes/"
        log "saved finding: tests/fuzz/crashes/dump_parser/$(basename "$f")"
        found=$((found + 1))
    done
}

stat_of() { sed -n "s/^stat::$1: *//p" "$build/fuzz.log" | tail -1; }

main() {
    parse_args "$@"
    build_fuzzer
    seed_corpus
    run_fuzzer
    collect_crashes
    log "executions: $(stat_of number_of_executed_units)"
    log "exec/s: $(stat_of average_exec_per_sec)"
    log "new corpus units: $(stat_of new_units_added)"
    log "crashes: $found"
    if (( found > 0 || status != 0 )); then
        log "fuzzer exit status $status; log: $build/fuzz.log"
        exit 1
    fi
}

main "$@"
