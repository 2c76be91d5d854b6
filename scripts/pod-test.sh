#!/usr/bin/env bash
# The real image and the real pods: builds the lockwatch image from deploy/docker/Dockerfile as a
# user would, builds a JDK 17 application image with a contended scenario, plays the shipped
# manifests with podman (images swapped in a temporary copy, nothing else changed) and checks
# from outside the pods what they promise:
#   sidecar      deploy/kubernetes/deployment.yaml + configmap.yaml: the sidecar samples the JVM,
#                /metrics names the lock, both containers run as the manifest says (uid/gid, no
#                capabilities, read-only root), a real Prometheus with the shipped rules fires the
#                BLOCKED-spike alert, and the sidecar stops cleanly on SIGTERM;
#   no-shared-pid deploy/kubernetes/no-shared-pid/: the same without a shared PID namespace;
#   node         deploy/kubernetes/node-agent/: the agent in the host PID namespace samples JVMs
#                of two uids in kubelet-shaped cgroups, labels them from a fixture /var/log/pods
#                tree, holds no capability at rest, and drops the series of a pod that goes.
#
#   scripts/pod-test.sh [--build-only] [--keep]
#
# Needs root, podman, runc, catatonit, debootstrap, uidmap, fuse-overlayfs, slirp4netns
# (scripts/deps.sh) and Debian's prometheus; skips, saying why, where podman cannot run. The
# debootstrap base and the built images are cached (LOCKWATCH_POD_CACHE, default
# /var/cache/lockwatch-pod-test, and podman's own storage) under content-hash keys: a run
# rebuilds only what the Dockerfiles, the sources or the scenario changed. Everything a run
# starts is removed by name at the end (--keep leaves the pods running for a look).
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD

build_only=false keep=false
for arg in "$@"; do
  case $arg in
    --build-only) build_only=true ;;
    --keep) keep=true ;;
    *) echo "usage: scripts/pod-test.sh [--build-only] [--keep]" >&2; exit 2 ;;
  esac
done

cache=${LOCKWATCH_POD_CACHE:-/var/cache/lockwatch-pod-test}
export CONTAINERS_CONF=$src/tests/pod/containers.conf
repo=localhost/lockwatch-pod-test   # every image this script builds, but the base's tags
started=$(date +%s)

say() { echo "pod-test: $*"; }
elapsed() { echo "$(( $(date +%s) - started ))s"; }
skip() {
  say "SKIPPED: $*"
  # deps.sh installs everything this test needs: on CI a missing tool is a broken setup.
  if [ "${CI:-}" = true ] && [ "${2:-}" = missing ]; then exit 1; fi
  exit 0
}
fail() { say "FAIL: $*"; exit 1; }

preflight() {
  [ "$(id -u)" -eq 0 ] || skip "needs root (podman with runc and cgroups, nsenter, debootstrap)"
  local tool
  for tool in podman runc catatonit debootstrap nsenter curl prometheus python3 javac; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/deps.sh installs it)" missing
  done
  podman info >/dev/null 2>&1 || skip "podman cannot run here: $(podman info 2>&1 | tail -1)"
}

# A content hash of files and strings: the cache key of an image.
content_key() {
  {
    for item in "$@"; do
      if [ -d "$item" ]; then
        find "$item" -type f -print0 | sort -z | xargs -0 sha256sum
      elif [ -f "$item" ]; then
        sha256sum "$item"
      else
        echo "$item"
      fi
    done
  } | sha256sum | cut -c1-16
}

image_id() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null; }

# `podman build` keeps every stage's layers as untagged images (the build stage of the lockwatch
# image with its compiled tree is about 900 MB). A build records the ids it made; once a newer
# build of the same image is done, the older one's are removed by id - those still used as the
# newer one's cache (the build stage's package layer) are refused by podman and stay.
recorded_build() {
  local name=$1 key=$2 log=$3
  shift 3
  local before
  before=$(podman images -a -q --no-trunc | sort -u)
  nice podman build "$@" >"$log" 2>&1 || return 1
  comm -13 <(echo "$before") <(podman images -a -q --no-trunc | sort -u) >"$cache/$name-$key.layers"
  local old id
  for old in "$cache/$name"-*.layers; do
    [ "$old" = "$cache/$name-$key.layers" ] && continue
    while read -r id; do podman rmi "$id" >/dev/null 2>&1 || true; done <"$old"
    rm -f "$old"
  done
}

# Keeps one tag of `name`: the other tags this script made of it are removed, by name.
forget_old() {
  local name=$1 keep_tag=$2 ref
  for ref in $(podman images --format '{{.Repository}}:{{.Tag}}' --filter "reference=$name"); do
    [ "$ref" = "$name:$keep_tag" ] || podman rmi "$ref" >/dev/null 2>&1 || true
  done
}

mirror() {
  sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1 | grep . || echo http://deb.debian.org/debian
}

# What Debian's official images set for apt (debuerreotype's docker-* files): no .deb kept after
# an install, no translations. Without them every image built on the stand-in base would carry
# the packages it installed twice, and its size would say nothing about the real one.
official_apt_settings() {
  local rootfs=$1 conf=$1/etc/apt/apt.conf.d
  rm -f "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/cache/apt/*.bin
  cat >"$conf/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'Acquire::Languages "none";' >"$conf/docker-no-languages"
  echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$conf/docker-autoremove-suggests"
}

# Debian 12 minbase from the mirror, imported under the names the Dockerfiles use: there is no
# registry to pull debian:12 from on the machines the project tests on.
base_image() {
  local key tar
  key=$(content_key "debootstrap --variant=minbase bookworm $(mirror)" "$(declare -f official_apt_settings)")
  tar=$cache/debian-12-$key.tar
  if [ "$(podman image inspect --format '{{index .Labels "lockwatch.pod-test.key"}}' localhost/debian:12 2>/dev/null)" != "$key" ]; then
    if [ ! -s "$tar" ]; then
      say "debootstrap bookworm (minbase) into the cache"
      mkdir -p "$cache"
      local rootfs=$cache/rootfs.tmp
      rm -rf "$rootfs"
      debootstrap --variant=minbase bookworm "$rootfs" "$(mirror)" >"$cache/debootstrap.log" 2>&1 \
        || fail "debootstrap failed, see $cache/debootstrap.log"
      official_apt_settings "$rootfs"
      tar -C "$rootfs" -cf "$tar.tmp" . && mv "$tar.tmp" "$tar"
      rm -rf "$rootfs"
      rm -f "$cache"/debian-12-*.tar.tmp
      find "$cache" -maxdepth 1 -name 'debian-12-*.tar' ! -name "debian-12-$key.tar" -delete
    fi
    say "importing the base image"
    podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
      --change 'CMD ["bash"]' --change "LABEL lockwatch.pod-test.key=$key" "$tar" localhost/debian:12 >/dev/null
  fi
  podman tag localhost/debian:12 docker.io/library/debian:12 docker.io/library/debian:12-slim
}

# The lockwatch image, built exactly as docs/deployment.md says (podman reads the
# Dockerfile.dockerignore beside the Dockerfile, as BuildKit does).
lockwatch_image() {
  local key
  key=$(content_key "$(image_id localhost/debian:12)" deploy/docker CMakeLists.txt cmake parser config daemon)
  lockwatch_ref=$repo/lockwatch:$key
  if ! podman image exists "$lockwatch_ref"; then
    say "building $lockwatch_ref from deploy/docker/Dockerfile (compiles lockwatch: minutes)"
    local t0=$SECONDS
    recorded_build lockwatch "$key" "$cache/lockwatch-build.log" --pull=never -f deploy/docker/Dockerfile -t "$lockwatch_ref" . \
      || { tail -30 "$cache/lockwatch-build.log"; fail "the image did not build, see $cache/lockwatch-build.log"; }
    say "lockwatch image built in $((SECONDS - t0))s"
  fi
  forget_old "$repo/lockwatch" "$key"
}

# The application: BlockedSpike compiled here, on Debian's JRE 17.
app_image() {
  local key scenarios=tests/java/scenarios
  key=$(content_key "$(image_id localhost/debian:12)" tests/pod/app "$scenarios/BlockedSpike.java" "$scenarios/Scenario.java")
  app_ref=$repo/shop:$key
  if ! podman image exists "$app_ref"; then
    say "building $app_ref (openjdk-17-jre-headless + BlockedSpike)"
    local ctx
    ctx=$(mktemp -d /var/tmp/lockwatch-pod-app.XXXXXX)
    cp tests/pod/app/Containerfile "$ctx/"
    javac -encoding UTF-8 --release 17 -d "$ctx/classes" "$scenarios/BlockedSpike.java" "$scenarios/Scenario.java"
    recorded_build shop "$key" "$cache/app-build.log" --pull=never -f "$ctx/Containerfile" -t "$app_ref" "$ctx" \
      || { tail -30 "$cache/app-build.log"; rm -rf "$ctx"; fail "the application image did not build, see $cache/app-build.log"; }
    rm -rf "$ctx"
  fi
  forget_old "$repo/shop" "$key"
}

build_images() {
  mkdir -p "$cache"
  base_image
  lockwatch_image
  app_image
  say "images: $lockwatch_ref $(podman image inspect --format '{{.Size}}' "$lockwatch_ref") bytes," \
      "$app_ref $(podman image inspect --format '{{.Size}}' "$app_ref") bytes ($(elapsed))"
}

preflight
build_images
$build_only && exit 0

# shellcheck source=tests/pod/checks.sh
. tests/pod/checks.sh
run_checks
say "passed ($(elapsed))"
