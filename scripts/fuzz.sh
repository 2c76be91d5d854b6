#!/usr/bin/env bash
# Runs the libFuzzer targets (clang, ASan + UBSan).
#
# Builds lockwatch_<target>_fuzzer in build-fuzz, seeds a working corpus outside the
# repository (build-fuzz/corpus/<target>) from tests/fuzz/corpus/<target>, the saved crashes
# and the target's real inputs, runs the fuzzer, and copies any finding into
# tests/fuzz/crashes/<target>/ (replayed by the ctest fuzz.replay.<target> from then on).
# Exits non-zero on a finding.
#
# usage: scripts/fuzz.sh [--target NAME] [--runs N] [--seconds S] [--max-len B]
#   --target NAME dump_parser (default), config_loader, attach_reply, perfdata, or all:
#                 each target in turn, with --runs and --seconds split evenly between them
#   --runs N      stop after N executions (default 10000000)
#   --seconds S   stop after S seconds, whichever comes first (default: no time limit)
#   --max-len B   longest input in bytes; default per target: dump_parser 4096 (real dumps
#                 are cut to their first 4 KiB, which keeps hundreds of executions a
#                 second; 65536 for deep runs), config_loader 4096 (the annotated example is
#                 3.5 KiB), attach_reply 1024, perfdata 32768 (a whole hsperfdata file)
# Environment: LOCKWATCH_CORPUS_DIR (real dumps; default ../shared/corpus/public next to
# the repo), LOCKWATCH_SOURCE_DIR (CMake source tree; default the repo), JOBS (default 1).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source_dir=${LOCKWATCH_SOURCE_DIR:-$repo}
build="$repo/build-fuzz"
corpus=${LOCKWATCH_CORPUS_DIR:-$repo/../shared/corpus/public}
all_targets=(dump_parser config_loader attach_reply perfdata ring)
target=dump_parser
runs=10000000
seconds=0
max_len=
found_total=0
failed=0
findings=()  # "target<TAB>saved file<TAB>fuzz log", reported again at the very end
stopped=()   # "target<TAB>exit status<TAB>fuzz log": a fuzzer that failed without a finding

log() { printf '%s\n' "$*"; }
die() { printf 'fuzz.sh: %s\n' "$*" >&2; exit 2; }
usage() { sed -n 's/^# \{0,1\}//; 10,20p' "${BASH_SOURCE[0]}"; }

parse_args() {
    while (( $# )); do
        case $1 in
            --target) [[ " ${all_targets[*]} all " == *" ${2:-} "* ]] || die "--target takes one of: ${all_targets[*]} all"
                      target=$2; shift 2 ;;
            --runs) [[ ${2:-} =~ ^[0-9]+$ ]] || die "--runs takes a number"; runs=$2; shift 2 ;;
            --seconds) [[ ${2:-} =~ ^[0-9]+$ ]] || die "--seconds takes a number"; seconds=$2; shift 2 ;;
            --max-len) [[ ${2:-} =~ ^[0-9]+$ ]] || die "--max-len takes a number"; max_len=$2; shift 2 ;;
            -h|--help) usage; exit 0 ;;
            *) usage >&2; exit 2 ;;
        esac
    done
}

# Real inputs each target starts from besides its own seeds (files or directories).
extra_seeds() {
    case $1 in
        dump_parser) printf '%s\n' "$corpus" "$repo/tests/golden/captured" ;;
        config_loader) printf '%s\n' "$repo/deploy/lockwatch.yaml" ;;
        perfdata) printf '%s\n' "$repo/tests/sampling/data/hsperfdata" ;;
    esac
}

default_max_len() {
    case $1 in
        attach_reply) echo 1024 ;;
        perfdata) echo 32768 ;;
        ring) echo 32768 ;;
        *) echo 4096 ;;
    esac
}

build_fuzzers() {
    local -a build_targets=()
    local t
    for t in "$@"; do build_targets+=(--target "lockwatch_${t}_fuzzer"); done
    CC=clang CXX=clang++ cmake -S "$source_dir" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DLOCKWATCH_BUILD_FUZZERS=ON -DLOCKWATCH_BUILD_TESTS=ON -DLOCKWATCH_BUILD_BENCH=OFF \
        -DLOCKWATCH_CORPUS_DIR="$corpus" >/dev/null
    [[ -d $build/tests/fuzz ]] || die "tests/fuzz is not in the build: tests/CMakeLists.txt must add_subdirectory(fuzz)"
    cmake --build "$build" -j "${JOBS:-1}" "${build_targets[@]}"
}

# Copies a file, or the files under a directory, into the working corpus under flattened
# names (captured dumps share names).
seed_from() {
    local root=$1 work=$2 f
    if [[ -f $root ]]; then
        cp -n "$root" "$work/seed-$(basename "$root")"
        return 0
    fi
    [[ -d $root ]] || return 0
    while IFS= read -r -d '' f; do
        cp -n "$f" "$work/seed-$(echo "${f#"$root"/}" | tr '/' '_')"
    done < <(find "$root" -type f -not -name '.*' -not -name '*.md' -print0)
}

seed_corpus() {
    local t=$1 work=$2 src
    mkdir -p "$work"
    seed_from "$repo/tests/fuzz/corpus/$t" "$work"
    seed_from "$repo/tests/fuzz/crashes/$t" "$work"
    while IFS= read -r src; do seed_from "$src" "$work"; done < <(extra_seeds "$t")
    log "working corpus: $work ($(find "$work" -type f | wc -l) files)"
}

# Runs one target for `t_runs` executions / `t_seconds` seconds; sets `status`.
run_fuzzer() {
    local t=$1 t_runs=$2 t_seconds=$3 work=$4 artifacts=$5 fuzz_log=$6
    local fuzzer="$build/tests/fuzz/lockwatch_${t}_fuzzer"
    # A single allocation of 256 MiB is a finding on its own (inputs are a few KiB), and
    # reporting it at the malloc is immediate, where the RSS limit's heap profile can take
    # minutes on a heap of millions of small blocks.
    local -a args=(-runs="$t_runs" -max_len="${max_len:-$(default_max_len "$t")}" -rss_limit_mb=2048
                   -malloc_limit_mb=256 -timeout=30 -print_final_stats=1 -artifact_prefix="$artifacts/")
    (( t_seconds > 0 )) && args+=(-max_total_time="$t_seconds")
    rm -rf "$artifacts"
    mkdir -p "$artifacts"
    log "running: $fuzzer ${args[*]} $work"
    set +e
    UBSAN_OPTIONS=print_stacktrace=1 "$fuzzer" "${args[@]}" "$work" 2>&1 | tee "$fuzz_log"
    status=${PIPESTATUS[0]}
    set -e
}

# libFuzzer writes crash-*, leak-*, timeout-* and oom-* files; all are findings. A
# slow-unit-* file is not: it only took longer than 10 s of wall time, which a busy shared
# machine causes on its own (a real hang exceeds -timeout and is a timeout-*).
collect_crashes() {
    local t=$1 artifacts=$2 fuzz_log=$3 f
    found=0
    mkdir -p "$repo/tests/fuzz/crashes/$t"
    for f in "$artifacts"/*; do
        [[ -f $f ]] || continue
        if [[ $(basename "$f") == slow-unit-* ]]; then
            log "slow input (not a finding): $f"
            continue
        fi
        cp "$f" "$repo/tests/fuzz/crashes/$t/"
        log "saved finding: tests/fuzz/crashes/$t/$(basename "$f")"
        findings+=("$t"$'\t'"$repo/tests/fuzz/crashes/$t/$(basename "$f")"$'\t'"$fuzz_log")
        found=$((found + 1))
    done
}

# A finding is told again after every target has run, where the last lines of a CI log show
# it: which target, the fuzzer's or sanitizer's words, and the input itself (base64 up to
# 4 KiB, enough for every default --max-len but perfdata's and ring's), so it can be replayed from the
# log alone when the machine that found it is gone.
report_findings() {
    local entry t file fuzz_log size code
    for entry in "${findings[@]}"; do
        IFS=$'\t' read -r t file fuzz_log <<<"$entry"
        size=$(stat -c %s "$file")
        log "-- finding of $t: ${file#"$repo"/} ($size bytes)"
        grep -m 6 -E '_fuzzer: |^==[0-9]+==ERROR|^SUMMARY|runtime error|^ +(error|whole|other|split): ' "$fuzz_log" | sed 's/^/   /' || true
        # The first frames of the project's own code, past the handlers of a trap.
        grep -m 6 -E '^ +#[0-9]+ .* in (lockwatch::|LLVMFuzzerTestOneInput)' "$fuzz_log" | cut -c1-220 | sed 's/^/   /' || true
        if (( size <= 4096 )); then
            log "   input, base64 (base64 -d > FILE; build-fuzz/tests/fuzz/lockwatch_${t}_fuzzer FILE):"
            base64 -w 100 "$file" | sed 's/^/   /'
        else
            log "   input: the first 512 bytes of $size, base64:"
            head -c 512 "$file" | base64 -w 100 | sed 's/^/   /'
        fi
    done
    for entry in "${stopped[@]}"; do
        IFS=$'\t' read -r t code fuzz_log <<<"$entry"
        log "-- $t: the fuzzer exited with status $code and no finding; the end of its log:"
        tail -n 5 "$fuzz_log" | cut -c1-220 | sed 's/^/   /'
    done
}

stat_of() { sed -n "s/^stat::$2: *//p" "$1" | tail -1; }

fuzz_one() {
    local t=$1 t_runs=$2 t_seconds=$3
    local work="$build/corpus/$t" artifacts="$build/artifacts/$t" fuzz_log="$build/fuzz-$t.log"
    log "== $t"
    seed_corpus "$t" "$work"
    run_fuzzer "$t" "$t_runs" "$t_seconds" "$work" "$artifacts" "$fuzz_log"
    collect_crashes "$t" "$artifacts" "$fuzz_log"
    log "$t executions: $(stat_of "$fuzz_log" number_of_executed_units)"
    log "$t exec/s: $(stat_of "$fuzz_log" average_exec_per_sec)"
    log "$t new corpus units: $(stat_of "$fuzz_log" new_units_added)"
    log "$t corpus size: $(find "$work" -type f | wc -l) files"
    log "$t crashes: $found"
    found_total=$((found_total + found))
    if (( found > 0 || status != 0 )); then
        log "$t: fuzzer exit status $status; log: $fuzz_log"
        (( found > 0 )) || stopped+=("$t"$'\t'"$status"$'\t'"$fuzz_log")
        failed=1
    fi
}

main() {
    parse_args "$@"
    local -a targets=("$target")
    [[ $target == all ]] && targets=("${all_targets[@]}")
    build_fuzzers "${targets[@]}"
    # Split the budget; a target always gets at least one second and one run.
    local n=${#targets[@]} t t_runs t_seconds=0
    t_runs=$(( runs / n > 0 ? runs / n : 1 ))
    (( seconds > 0 )) && t_seconds=$(( seconds / n > 0 ? seconds / n : 1 ))
    for t in "${targets[@]}"; do fuzz_one "$t" "$t_runs" "$t_seconds"; done
    report_findings
    log "crashes: $found_total"
    (( failed == 0 )) || exit 1
}

main "$@"
