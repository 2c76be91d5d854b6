#!/usr/bin/env bash
# Compiles the Java scenario programs for the integration tests, at test time:
#   compile_scenarios.sh OUT_DIR JDK17_HOME [JDK25_HOME]
# JDK 17 gets every scenario but VirtualThreads and VirtualCrowd (JDK 21+); JDK 25, when present, gets all.
# Then the library scenarios (tests/java/libraries/, against Debian's jars) go to OUT_DIR/jdk17-lib
# and OUT_DIR/jdk25-lib through compile_libraries.sh; missing jars skip them with a message.
set -euo pipefail
out=$1 jdk17=$2 jdk25=${3:-}
src="$(cd "$(dirname "$0")/../java/scenarios" && pwd)"
rm -rf "$out" && mkdir -p "$out/jdk17"
mapfile -t sources < <(ls "$src"/*.java | grep -v -e '/VirtualThreads.java$' -e '/VirtualCrowd.java$')
"$jdk17/bin/javac" -encoding UTF-8 --release 17 -d "$out/jdk17" "${sources[@]}"
if [ -n "$jdk25" ] && [ -x "$jdk25/bin/javac" ]; then
  mkdir -p "$out/jdk25"
  "$jdk25/bin/javac" -encoding UTF-8 --release 21 -d "$out/jdk25" "$src"/*.java
else
  echo "compile_scenarios: no JDK 25 at '${jdk25}', the JDK 25 scenarios will be skipped"
fi
"$(dirname "$0")/compile_libraries.sh" "$out" "$jdk17" "$jdk25"
