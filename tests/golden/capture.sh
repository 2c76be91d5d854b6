#!/usr/bin/env bash
# Regenerates tests/golden/captured/ from the scenario programs in tests/java/scenarios/ and
# the library scenarios in tests/java/libraries/ (compiled against Debian's jars).
#
#   capture.sh                  everything: replaces captured/<jdk>/ as a whole
#   capture.sh SCENARIO...      only these (e.g. the library scenarios, or sigquit): replaces
#                               only captured/<jdk>/<SCENARIO>/, the other captures stay as they
#                               are (their reviewed expected output stays valid)
#
# For each available JDK (17 always; 25 if installed) it compiles the scenarios, runs each one,
# waits for its READY line and captures with that JDK's own tools:
#   <jdk>/<Scenario>/dump-N.txt     jstack -l, ~300 ms apart (3 dumps; 10 for ShortHolds)
#   <jdk>/<Scenario>/nolocks.txt    jstack without -l
#   jdk25/{VirtualThreads,ReentrantLockPool}/threads.json, threads-plain.txt
#                                   jcmd Thread.dump_to_file -format=json / -format=plain
#   <jdk>/sigquit/stdout.txt        stdout of MonitorContention after one SIGQUIT (dump + Heap)
#   <jdk>/<Library>/dump-N.txt      library scenarios: jcmd PID Thread.print, ~500 ms apart (3)
#   <jdk>/<Library>/locks.txt       jcmd PID Thread.print -l, right after
# The dumps are kept exactly as captured. The new set replaces captured/<jdk>/ only if every
# sanity check passes (a scenario whose dumps fail its check is re-run up to 3 times). A
# library scenario whose jars are missing is skipped with a message (its old captures stay).
#
# Environment: JDK17_HOME (default: the JDK of `javac` on PATH), JDK25_HOME
# (default /usr/lib/jvm/temurin-25-jdk-amd64), LIFETIME (seconds each scenario JVM may live).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
src="$repo/tests/java/scenarios"
out="$here/captured"

log() { printf '%s\n' "$*" >&2; }
die() { log "capture.sh: $*"; exit 1; }

if [[ -z ${JDK17_HOME:-} ]]; then
    javac_path=$(command -v javac) || die "no javac on PATH; set JDK17_HOME"
    JDK17_HOME=$(dirname "$(dirname "$(readlink -f "$javac_path")")")
fi
JDK25_HOME=${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
# Scenarios exit by themselves after this many seconds even if this script is killed hard.
LIFETIME=${LIFETIME:-90}
READY_TIMEOUT=30

SCENARIOS=(MonitorContention ShortHolds ReentrantLockPool LatchWait MonitorDeadlock JucDeadlock
           OddNames EventLoopBlocked)
# Library scenarios: their jars are listed in tests/java/libraries/jars.txt.
LIBRARIES=(LogbackSyncAppender Log4j2SyncAppender Pool2Exhausted NettyEventLoops TomcatSyncCache)
LIBRARY_READY_TIMEOUT=60   # Tomcat and Netty start first

is_library() { [[ " ${LIBRARIES[*]} " == *" $1 "* ]]; }

# The scenarios named on the command line (all when none), checked against the known names.
only=("$@")
for name in ${only[@]+"${only[@]}"}; do
    [[ " ${SCENARIOS[*]} ${LIBRARIES[*]} VirtualThreads sigquit " == *" $name "* ]] || die "unknown scenario '$name'"
done
wanted() { [[ ${#only[@]} -eq 0 || " ${only[*]} " == *" $1 "* ]]; }

work=$(mktemp -d)
stage="$work/stage"
mkdir "$stage"
pids=()

stop_jvm() {
    local pid=$1 i
    # Our own unreaped child: its pid cannot have been reused, so signalling it is safe.
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local pid
    for pid in ${pids[@]+"${pids[@]}"}; do
        stop_jvm "$pid"
    done
    rm -rf "$work" "$stage"
}
trap cleanup EXIT
# Make INT/TERM/HUP go through the EXIT trap, so no scenario JVM outlives the script.
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# start_jvm JAVA_HOME CLASSPATH CLASS STDOUT_FILE [READY_TIMEOUT] -> sets $jvm_pid once READY was printed
start_jvm() {
    local jdk=$1 classes=$2 cls=$3 stdout=$4 timeout=${5:-$READY_TIMEOUT} i
    : >"$stdout"   # exists before the first grep below, whenever the JVM gets to run
    "$jdk/bin/java" -Xmx256m -cp "$classes" "$cls" "$LIFETIME" >"$stdout" 2>"$stdout.err" &
    jvm_pid=$!
    pids+=("$jvm_pid")
    for i in $(seq $((timeout * 10))); do
        if grep -qx READY "$stdout"; then
            return 0
        fi
        if ! kill -0 "$jvm_pid" 2>/dev/null; then
            cat "$stdout.err" >&2
            die "$cls on $jdk exited before READY"
        fi
        sleep 0.1
    done
    die "$cls on $jdk did not print READY within ${timeout}s"
}

finish_jvm() {
    local pid=$1 keep=() p
    stop_jvm "$pid"
    for p in ${pids[@]+"${pids[@]}"}; do
        [[ $p == "$pid" ]] || keep+=("$p")
    done
    pids=(${keep[@]+"${keep[@]}"})
}

compile() {
    local jdk=$1 classes=$2 s
    mkdir -p "$classes"
    local files=()
    for s in "${SCENARIOS[@]}"; do files+=("$src/$s.java"); done
    # -sourcepath picks up the shared Scenario.java; VirtualThreads then uses its class.
    "$jdk/bin/javac" -encoding UTF-8 --release 17 -sourcepath "$src" -d "$classes" "${files[@]}"
    if [[ $jdk == "$JDK25_HOME" ]]; then
        "$jdk/bin/javac" -encoding UTF-8 --release 21 -cp "$classes" -d "$classes" "$src/VirtualThreads.java"
    fi
}

capture_scenario() {
    local tag=$1 jdk=$2 classes=$3 cls=$4
    local dir="$stage/$tag/$cls" n=3 i
    [[ $cls == ShortHolds ]] && n=10   # the point of ShortHolds is how dumps differ
    mkdir -p "$dir"
    log "[$tag] $cls"
    start_jvm "$jdk" "$classes" "$cls" "$work/$tag-$cls.out"
    local pid=$jvm_pid
    for i in $(seq "$n"); do
        [[ $i -gt 1 ]] && sleep 0.3
        "$jdk/bin/jstack" -l "$pid" >"$dir/dump-$i.txt"
    done
    "$jdk/bin/jstack" "$pid" >"$dir/nolocks.txt"
    if [[ $tag == jdk25 && ( $cls == VirtualThreads || $cls == ReentrantLockPool ) ]]; then
        rm -f "$work/$cls.json" "$work/$cls-plain.txt"   # jcmd refuses to overwrite
        "$jdk/bin/jcmd" "$pid" Thread.dump_to_file -format=json "$work/$cls.json" >/dev/null
        "$jdk/bin/jcmd" "$pid" Thread.dump_to_file -format=plain "$work/$cls-plain.txt" >/dev/null
        cp "$work/$cls.json" "$dir/threads.json"
        cp "$work/$cls-plain.txt" "$dir/threads-plain.txt"
    fi
    finish_jvm "$pid"
}

# A library scenario: three plain jcmd Thread.print ~500 ms apart, then one with -l.
capture_library() {
    local tag=$1 jdk=$2 cls=$3 i
    local dir="$stage/$tag/$cls" classes="$work/lib/$tag-lib"
    mkdir -p "$dir"
    log "[$tag] $cls"
    local start=$SECONDS
    start_jvm "$jdk" "$classes:$(cat "$classes/$cls.classpath")" "$cls" "$work/$tag-$cls.out" "$LIBRARY_READY_TIMEOUT"
    local pid=$jvm_pid
    log "  READY after $((SECONDS - start)) s"
    for i in 1 2 3; do
        [[ $i -gt 1 ]] && sleep 0.5
        "$jdk/bin/jcmd" "$pid" Thread.print >"$dir/dump-$i.txt"
    done
    "$jdk/bin/jcmd" "$pid" Thread.print -l >"$dir/locks.txt"
    finish_jvm "$pid"
}

capture_sigquit() {
    local tag=$1 jdk=$2 classes=$3 i
    local stdout="$work/$tag-sigquit.out"
    mkdir -p "$stage/$tag/sigquit"
    log "[$tag] sigquit (MonitorContention)"
    # A fresh JVM with no attach listener yet: SIGQUIT makes it print a dump to its stdout.
    start_jvm "$jdk" "$classes" MonitorContention "$stdout"
    local pid=$jvm_pid
    kill -QUIT "$pid"
    sleep 1
    for i in $(seq 40); do
        grep -q '^Heap' "$stdout" && break
        sleep 0.1
    done
    sleep 0.2
    cp "$stdout" "$stage/$tag/sigquit/stdout.txt"
    finish_jvm "$pid"
}

# capture_checked TAG JDK CLASSES CLASS: captures until the sanity checks pass (3 attempts)
capture_checked() {
    local tag=$1 jdk=$2 classes=$3 cls=$4 attempt
    for attempt in 1 2 3; do
        rm -rf "${stage:?}/$tag/$cls"
        if [[ $cls == sigquit ]]; then
            capture_sigquit "$tag" "$jdk" "$classes"
        elif is_library "$cls"; then
            capture_library "$tag" "$jdk" "$cls"
        else
            capture_scenario "$tag" "$jdk" "$classes" "$cls"
        fi
        check_scenario "$tag" "$cls" && return 0
        log "  attempt $attempt of $tag/$cls did not show the scenario"
    done
    failed+=("$tag/$cls")
}

capture_jdk() {
    local tag=$1 jdk=$2 cls
    local classes="$work/classes-$tag"
    compile "$jdk" "$classes"
    local run=("${SCENARIOS[@]}")
    [[ $tag == jdk25 ]] && run+=(VirtualThreads)
    run+=(sigquit)
    for cls in "${LIBRARIES[@]}"; do
        if [[ -f $work/lib/$tag-lib/$cls.classpath ]]; then
            run+=("$cls")
        elif wanted "$cls"; then
            log "[$tag] SKIPPING $cls: not compiled (its jars are missing, see above); its captures stay as they were"
            skipped+=("$tag/$cls")
        fi
    done
    for cls in "${run[@]}"; do
        wanted "$cls" || continue
        capture_checked "$tag" "$jdk" "$classes" "$cls"
    done
}

# ---- sanity checks: a dump that does not show its scenario must not become golden ----------

check_failures=0
fail() { log "  check failed: $*"; check_failures=$((check_failures + 1)); }

# count FILE REGEX: number of matching lines
count() { grep -cE -- "$2" "$1" || true; }

# at_least FILE REGEX MIN
at_least() {
    local c
    c=$(count "$1" "$2")
    [[ $c -ge $3 ]] || fail "${1#"$stage"/}: '$2' matched $c times, want >= $3"
}

# exactly FILE REGEX N
exactly() {
    local c
    c=$(count "$1" "$2")
    [[ $c -eq $3 ]] || fail "${1#"$stage"/}: '$2' matched $c times, want $3"
}

# check_scenario TAG CLASS: returns non-zero if the captured files do not show the scenario
check_scenario() {
    local tag=$1 cls=$2 d="$stage/$1/$2" f any=0
    check_failures=0
    case $cls in
    MonitorContention)
        for f in "$d"/dump-*.txt "$d"/nolocks.txt; do
            at_least "$f" 'waiting to lock <0x[0-9a-f]+> \(a Inventory\)' 5
            exactly "$f" '^[[:blank:]]- locked <0x[0-9a-f]+> \(a Inventory\)' 1
        done ;;
    ShortHolds)
        # Timing-dependent: on a loaded machine the waiters may not pile up; retried then.
        for f in "$d"/dump-*.txt; do
            [[ $(count "$f" 'waiting to lock <0x[0-9a-f]+> \(a TokenSigner\)') -gt 0 ]] && any=$((any + 1))
        done
        [[ $any -ge 3 ]] || fail "$tag/ShortHolds: only $any of 10 dumps show BLOCKED waiters" ;;
    ReentrantLockPool)
        for f in "$d"/dump-*.txt; do
            at_least "$f" 'parking to wait for  <0x[0-9a-f]+> \(a java\.util\.concurrent\.locks\.ReentrantLock\$NonfairSync\)' 4
            exactly "$f" '^[[:blank:]]- <0x[0-9a-f]+> \(a java\.util\.concurrent\.locks\.ReentrantLock\$NonfairSync\)' 1
        done
        exactly "$d/nolocks.txt" 'Locked ownable synchronizers' 0
        if [[ $tag == jdk25 ]]; then
            at_least "$d/threads.json" 'ReentrantLock\$NonfairSync' 4
        fi ;;
    LatchWait)
        for f in "$d"/dump-*.txt "$d"/nolocks.txt; do
            exactly "$f" 'parking to wait for  <0x[0-9a-f]+> \(a java\.util\.concurrent\.CountDownLatch\$Sync\)' 5
        done ;;
    MonitorDeadlock)
        for f in "$d"/dump-*.txt "$d"/nolocks.txt; do
            exactly "$f" '^Found one Java-level deadlock:' 1
            exactly "$f" '^Found 1 deadlock\.' 1
        done ;;
    JucDeadlock)
        for f in "$d"/dump-*.txt "$d"/nolocks.txt; do
            exactly "$f" '^Found one Java-level deadlock:' 2
            exactly "$f" '^Found 2 deadlocks\.' 1
        done ;;
    OddNames)
        for f in "$d"/dump-*.txt "$d"/nolocks.txt; do
            exactly "$f" 'waiting to lock <0x[0-9a-f]+> \(a Registry\)' 6
            exactly "$f" '^[[:blank:]]- locked <0x[0-9a-f]+> \(a Registry\)' 1
        done ;;
    EventLoopBlocked)
        for f in "$d"/dump-*.txt "$d"/nolocks.txt; do
            at_least "$f" 'waiting to lock <0x[0-9a-f]+> \(a PluginLoader\)' 2
        done ;;
    VirtualThreads)
        for f in "$d"/dump-*.txt; do
            at_least "$f" '^   Carrying virtual thread #' 1
            exactly "$f" 'waiting to lock <0x[0-9a-f]+> \(a AuditLog\)' 1
            exactly "$f" 'locked <0x[0-9a-f]+> \(a AuditLog\)' 0
        done
        at_least "$d/threads.json" '"name": "session-vt-' 4
        at_least "$d/threads-plain.txt" '"metrics-vt-' 3 ;;
    sigquit)
        at_least "$d/stdout.txt" '^Full thread dump ' 1
        at_least "$d/stdout.txt" '^Heap' 1 ;;
    LogbackSyncAppender)
        for f in "$d"/dump-*.txt "$d"/locks.txt; do
            at_least "$f" 'parking to wait for  <0x[0-9a-f]+> \(a java\.util\.concurrent\.locks\.ReentrantLock\$NonfairSync\)' 12
            at_least "$f" 'at ch\.qos\.logback\.core\.OutputStreamAppender\.writeBytes' 13
        done
        # The holder: the appender's lock among its ownable synchronizers.
        exactly "$d/locks.txt" '^[[:blank:]]- <0x[0-9a-f]+> \(a java\.util\.concurrent\.locks\.ReentrantLock\$NonfairSync\)' 1 ;;
    Log4j2SyncAppender)
        for f in "$d"/dump-*.txt "$d"/locks.txt; do
            # Usually 15; fewer while threads move from one waiting site (writeBytes) to the other (flush).
            at_least "$f" 'waiting to lock <0x[0-9a-f]+> \(a org\.apache\.logging\.log4j\.core\.appender\.FileManager\)' 10
            at_least "$f" '^[[:blank:]]- locked <0x[0-9a-f]+> \(a org\.apache\.logging\.log4j\.core\.appender\.FileManager\)' 1
        done ;;
    Pool2Exhausted)
        for f in "$d"/dump-*.txt "$d"/locks.txt; do
            at_least "$f" 'at org\.apache\.commons\.pool2\.impl\.LinkedBlockingDeque\.(takeFirst|pollFirst)' 40
            at_least "$f" 'at RedisConnection\.setex' 3   # 4 holders, but one may be between two borrows
            # 8 idle pool-1-thread-N, and the commons-pool-evictor (a ScheduledThreadPoolExecutor).
            exactly "$f" '^"pool-1-thread-[0-9]+" ' 8
            exactly "$f" 'at java\.util\.concurrent\.ThreadPoolExecutor\.getTask' 9
            exactly "$f" 'parking to wait for  <0x[0-9a-f]+> \(a java\.util\.concurrent\.CountDownLatch\$Sync\)' 3
            exactly "$f" 'parking to wait for  <0x[0-9a-f]+> \(a java\.util\.concurrent\.CompletableFuture\$Signaller\)' 2
        done ;;
    NettyEventLoops)
        for f in "$d"/dump-*.txt "$d"/locks.txt; do
            # Group A: BLOCKED in class loading (with and without a lock line), one holder.
            at_least "$f" 'waiting to lock <0x[0-9a-f]+> \(a CodecPluginClassLoader\)' 1
            at_least "$f" 'java\.lang\.Thread\.State: BLOCKED' 2
            exactly "$f" '^[[:blank:]]- locked <0x[0-9a-f]+> \(a CodecPluginClassLoader\)' 1
            # Group B: parked on the logback appender.
            at_least "$f" 'parking to wait for  <0x[0-9a-f]+> \(a java\.util\.concurrent\.locks\.ReentrantLock\$NonfairSync\)' 2
        done ;;
    TomcatSyncCache)
        for f in "$d"/dump-*.txt "$d"/locks.txt; do
            at_least "$f" 'waiting to lock <0x[0-9a-f]+> \(a ProductCache\)' 8
            exactly "$f" '^[[:blank:]]- locked <0x[0-9a-f]+> \(a ProductCache\)' 1
        done ;;
    *) fail "no check for $cls" ;;
    esac
    [[ $check_failures -eq 0 ]]
}

# ---- main -----------------------------------------------------------------------------------

version=$("$JDK17_HOME/bin/java" -version 2>&1) || true
[[ $version == *'version "17'* ]] || die "JDK17_HOME=$JDK17_HOME is not a JDK 17 (set JDK17_HOME)"
failed=() skipped=()
# The library scenarios, for both JDKs at once (-> $work/lib/jdk17-lib, jdk25-lib); a scenario
# whose jars are missing is reported there and not compiled.
"$repo/tests/integration/compile_libraries.sh" "$work/lib" "$JDK17_HOME" "$JDK25_HOME" >&2
capture_jdk jdk17 "$JDK17_HOME"

if [[ -x $JDK25_HOME/bin/java ]]; then
    capture_jdk jdk25 "$JDK25_HOME"
else
    log "capture.sh: SKIPPING JDK 25 captures: no JDK at $JDK25_HOME (set JDK25_HOME)."
    log "            captured/jdk25 (including VirtualThreads) is left as it was."
fi

if [[ ${#failed[@]} -gt 0 ]]; then
    kept=$(mktemp -d)
    cp -r "$stage"/. "$kept"/
    die "sanity checks failed for: ${failed[*]}; captured/ left unchanged (this attempt kept in $kept)"
fi

mkdir -p "$out"
if [[ ${#only[@]} -gt 0 ]]; then
    # Only the scenarios captured now are replaced; every other capture stays as it is.
    for dir in "$stage"/*/*/; do
        rel=${dir#"$stage"/}
        rel=${rel%/}
        rm -rf "${out:?}/$rel"
        mkdir -p "$(dirname "$out/$rel")"
        mv "$stage/$rel" "$out/$rel"
        chmod -R u=rwX,go=rX "$out/$rel"
        log "capture.sh: replaced captured/$rel"
    done
else
    # Replace per JDK, so that a run without JDK 25 keeps the existing jdk25/ captures; a
    # library scenario skipped for missing jars keeps its old captures too.
    for s in ${skipped[@]+"${skipped[@]}"}; do
        if [[ -d $out/$s && -d $stage/${s%%/*} ]]; then
            cp -r "$out/$s" "$stage/$s"
        fi
    done
    for tagdir in "$stage"/*/; do
        tag=$(basename "$tagdir")
        rm -rf "${out:?}/$tag"
        mv "$stage/$tag" "$out/$tag"
        chmod -R u=rwX,go=rX "$out/$tag"
    done
fi
log "capture.sh: $(find "$out" -type f | wc -l) files in $out"
