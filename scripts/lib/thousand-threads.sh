# Sourced by the bench scripts and the soak: the one way they start
# bench/java/ThousandThreads.java, the JVM they measure against (its arguments are in its own
# header).
#
#   thousand_threads WORK HEAP_MIB [JVM_OPTION...] -- [PROGRAM_ARG...]
#
# Compiles it into WORK (once), starts it with its output in WORK/jvm.out and waits for its
# READY line - up to 2 minutes: ten thousand threads take one to start. Its pid is then in
# $jvm. A JVM that does not start is killed and ends the script (exit 1) with what it printed.
thousand_threads() {
  local work=$1 heap=$2
  shift 2
  local options=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do options+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  [ -f "$work/ThousandThreads.class" ] || javac -d "$work" bench/java/ThousandThreads.java
  : >"$work/jvm.out"
  java -Xss512k -Xmx"$heap"m "${options[@]}" -cp "$work" ThousandThreads "$@" >"$work/jvm.out" 2>&1 &
  jvm=$!
  for _ in $(seq 1200); do grep -qx READY "$work/jvm.out" && return 0; sleep 0.1; done
  echo "the JVM did not start:" >&2
  cat "$work/jvm.out" >&2
  kill "$jvm" 2>/dev/null || true  # not the caller's yet: its clean-up would miss it
  exit 1
}
