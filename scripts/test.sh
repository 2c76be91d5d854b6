#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to every test passing:
#   1. the Debian packages,
#   2. a release build with warnings as errors and the whole CTest suite
#      (unit, golden, fuzz replay, scenario JVMs, the pages in headless chromium),
#   3. the same suites built with AddressSanitizer + UndefinedBehaviorSanitizer,
#   4. a short libFuzzer smoke run of every fuzz target, the 60 s split evenly between the
#      five (the long campaign is scripts/fuzz.sh),
#   5. a 60 s soak of the daemon on a 1000-thread JVM (the long one is scripts/soak.sh),
#   6. the real image and pods with podman (scripts/pod-test.sh: the image from
#      deploy/docker/Dockerfile, the shipped sidecar, no-shared-pid and node-agent manifests,
#      a real Prometheus firing the shipped alert); skipped, saying why, where podman cannot run.
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=$(nproc)
scripts/deps.sh

echo "== release build (-Werror)"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOCKWATCH_WERROR=ON >/dev/null
cmake --build build/release -j "$jobs"
ctest --test-dir build/release --output-on-failure -j "$jobs"

echo "== ASan+UBSan build"
cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLOCKWATCH_WERROR=ON \
  -DLOCKWATCH_SANITIZE=ON -DLOCKWATCH_BUILD_BENCH=OFF >/dev/null
cmake --build build/asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j "$jobs"

if [ -x scripts/fuzz.sh ]; then
  echo "== fuzz smoke"
  scripts/fuzz.sh --target all --seconds "${LOCKWATCH_FUZZ_SMOKE_SECONDS:-60}"
fi
echo "== soak smoke"
scripts/soak.sh --seconds "${LOCKWATCH_SOAK_SMOKE_SECONDS:-60}" --ring 100 --build build/release
echo "== pod test"
scripts/pod-test.sh
echo "== all tests passed"
