#!/usr/bin/env bash
# Installs the Debian 12 packages lockwatch builds and tests with (as root, or via sudo).
# Idempotent: packages already present are left alone, so a warm machine takes seconds.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libboost1.74-dev libboost-filesystem1.74-dev                        # Asio, Process (needs Filesystem)
  libspdlog-dev prometheus-cpp-dev libyaml-cpp-dev                    # daemon (export, config, logs)
  libssl-dev libcrypt-dev                                             # HTTP: TLS, bcrypt for basic auth
  openssl                                                             # tests: certificates made at test time
  catch2 libbenchmark-dev                                             # tests and benchmarks
  prometheus                                                          # promtool, and Prometheus for the dashboard test
  python3 python3-yaml                                                # tests/deploy: manifest and image checks
  curl                                                                # bench scripts, the TLS e2e test
  clang libclang-rt-14-dev                                            # libFuzzer
  openjdk-17-jdk-headless                                             # scenario JVMs, jstack
  podman runc catatonit debootstrap uidmap fuse-overlayfs slirp4netns # scripts/pod-test.sh: the real image and pods
  liblogback-java libslf4j-java liblog4j2-java libcommons-pool2-java  # tests/java/libraries: scenarios that lock inside
  libnetty-java libtomcat10-java                                      #   the real libraries (jars in /usr/share/java)
  apache2-utils                                                       # ab: more load on TomcatSyncCache by hand (-n/-t, 127.0.0.1)
  chromium                                                            # tests/e2e/page_test.cpp, scripts/screenshots.sh: the pages in a browser
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
