# shellcheck shell=bash
# The checks of scripts/pod-test.sh, sourced by it after the images are built ($src, $repo,
# $lockwatch_ref, $app_ref, $keep, say, fail). Every pod and container here has a name starting
# with lockwatch-pod-test or shop (the shipped manifests' name) and is removed by that name.
#
# The pods get no network but their own loopback (`--network none`): lockwatch's port and the
# Prometheus that scrapes it are reached inside the pod's network namespace (nsenter -n), so no
# traffic leaves the machine's loopback interfaces.

work=$(mktemp -d /var/tmp/lockwatch-pod-test.XXXXXX)
played=()        # manifests to `podman kube down`
containers=()    # containers to `podman rm -f`, by name
prometheus_pid=""

cleanup() {
  local status=$?
  if $keep; then
    say "--keep: left running: ${played[*]} ${containers[*]}; remove with podman kube down / podman rm -f"
    return $status
  fi
  [ -z "$prometheus_pid" ] || kill "$prometheus_pid" 2>/dev/null || true
  if declare -F node_cleanup >/dev/null; then node_cleanup; fi
  local m c v
  for m in "${played[@]}"; do podman kube down "$m" >/dev/null 2>&1 || true; done
  for c in "${containers[@]}"; do podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  for v in "${volumes[@]}"; do podman volume rm -f "$v" >/dev/null 2>&1 || true; done
  rm -rf "$work"
  return $status
}
trap cleanup EXIT

# --- helpers -------------------------------------------------------------------------------

pid_of() { podman inspect --format '{{.State.Pid}}' "$1"; }

# A command inside the network namespace of container $1 (its pod's).
in_net() { local c=$1; shift; nsenter -t "$(pid_of "$c")" -n "$@"; }

get() { in_net "$1" curl -sf --max-time 5 "http://127.0.0.1:$2$3"; }

# wait_for SECONDS DESCRIPTION COMMAND...: retries COMMAND until it succeeds.
wait_for() {
  local seconds=$1 what=$2 deadline=$((SECONDS + $1))
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "no $what within ${seconds}s"
    sleep 1
  done
}

# (grep without -q in pipes: an early exit would fail the writer under pipefail)
metrics_have() { get "$1" 9465 /metrics | grep -F -- "$2" >/dev/null; }

# The shipped manifest with the example images swapped for the ones built here, and container
# ports left unpublished (tests/pod/swap_manifest.py says why, and checks nothing else changes).
swap_images() {
  python3 tests/pod/swap_manifest.py "$1" "$2" "$app_ref" "$lockwatch_ref" || fail "cannot copy $1"
}

status_field() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status" | tr -s '\t ' ' '; }

# What the manifest promises for a container: its uid/gid, no capability in any set, no new
# privileges, seccomp, and a root filesystem that refuses writes.
check_locked_down() {
  local c=$1 uid=$2 pid
  pid=$(pid_of "$c")
  [ "$(status_field "$pid" Uid)" = "$uid $uid $uid $uid" ] || fail "$c runs as uids '$(status_field "$pid" Uid)', not $uid"
  [ "$(status_field "$pid" Gid)" = "$uid $uid $uid $uid" ] || fail "$c runs as gids '$(status_field "$pid" Gid)', not $uid"
  local set
  for set in CapEff CapPrm CapInh CapAmb CapBnd; do
    [ "$(status_field "$pid" $set)" = 0000000000000000 ] || fail "$c has $set $(status_field "$pid" $set)"
  done
  [ "$(status_field "$pid" NoNewPrivs)" = 1 ] || fail "$c lacks no_new_privs"
  [ "$(status_field "$pid" Seccomp)" = 2 ] || fail "$c runs without a seccomp filter"
  [ "$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$c")" = true ] || fail "$c has a writable root filesystem"
  if podman exec "$c" sh -c ': > /lockwatch-pod-test-probe' 2>/dev/null; then fail "$c could write to its root filesystem"; fi
  say "$c: uid/gid $uid, no capabilities (CapEff/CapPrm/CapBnd 0), no_new_privs, seccomp, read-only root"
}

# Prometheus (Debian's) in the pod's network namespace, scraping lockwatch every second with
# the shipped rules; only `for:` and the spike alert's baseline window are shortened, as
# tests/e2e/dashboard_test.cpp does, so that a calm history and a jump fit in a test.
start_prometheus() {
  local c=$1 dir=$work/prometheus
  mkdir -p "$dir"
  sed -E -e 's/(^[[:space:]]+for:[[:space:]]*)[0-9]+[smh]/\11s/' -e 's/\[30m\] offset 5m/[20s] offset 2s/' \
    deploy/prometheus/lockwatch.rules.yml >"$dir/rules.yml"
  [ "$(grep -c '\[20s\] offset 2s' "$dir/rules.yml")" = 1 ] || fail "the shipped rules no longer have the spike baseline this test shortens"
  cat >"$dir/prometheus.yml" <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}
rule_files: ["$dir/rules.yml"]
scrape_configs:
  - job_name: lockwatch
    static_configs: [{targets: ["127.0.0.1:9465"]}]
EOF
  # nsenter itself, not a shell function: $! must be Prometheus's pid (nsenter execs it).
  nsenter -t "$(pid_of "$c")" -n prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" \
    --web.listen-address=127.0.0.1:9090 --log.level=warn >"$dir/log" 2>&1 &
  prometheus_pid=$!
  wait_for 90 "ready Prometheus" get "$c" 9090 /-/ready
}

prom_query() {
  get "$1" 9090 "/api/v1/query?query=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$2")" |
    python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; sys.exit(0 if r else 1)'
}

# An alert of that name, pending or firing, whose labels include every given name=value.
prom_alert() {
  local c=$1 name=$2
  shift 2
  get "$c" 9090 /api/v1/alerts | python3 -c '
import json, sys
name, want = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
alerts = json.load(sys.stdin)["data"]["alerts"]
sys.exit(0 if any(a["labels"].get("alertname") == name and a["state"] in ("pending", "firing")
                  and all(a["labels"].get(k) == v for k, v in want.items()) for a in alerts) else 1)' "$name" "$@"
}

# SIGTERM within the grace period (Kubernetes' default 30 s): exit code 0 and the log's
# goodbye, not a SIGKILL (137) at the end of the grace period.
check_sigterm() {
  local c=$1 t0=$SECONDS
  # (podman 4.3 without systemd says it cannot remove the probes' healthcheck timers: noise)
  podman stop -t 30 "$c" >"$work/stop.log" 2>&1 || { cat "$work/stop.log"; fail "podman stop $c failed"; }
  local took=$((SECONDS - t0)) code
  code=$(podman inspect --format '{{.State.ExitCode}}' "$c")
  [ "$code" = 0 ] || fail "$c exited $code on SIGTERM (137: killed at the end of the grace period)"
  [ $took -lt 30 ] || fail "$c took ${took}s to stop"
  # Into a file first: `podman logs | grep -q` fails under pipefail once grep stops reading.
  podman logs "$c" >"$work/$c.log" 2>&1
  grep -q 'msg=stopping signal=SIGTERM' "$work/$c.log" || fail "$c's log does not say it got SIGTERM"
  grep -q 'msg=stopped' "$work/$c.log" || fail "$c's log does not say it stopped"
  say "$c: SIGTERM -> exit 0 in ${took}s, log says stopping/stopped"
}

# podman 4.3 turns a pod's emptyDir and ConfigMap volumes into named volumes (named after the
# volume or the ConfigMap) and may leave them behind at `kube down`: the names the manifest
# gives, which no volume may hold before, so that the cleanup removes only the test's own.
play_volumes() {
  python3 -c '
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    spec = (d or {}).get("spec", {}).get("template", {}).get("spec", {})
    for v in spec.get("volumes", []):
        print(v["configMap"]["name"] if "configMap" in v else v["name"])' "$1"
}
volumes=()

play() {
  local manifest=$1 configmap=$2 v
  for v in $(play_volumes "$manifest"); do
    ! podman volume exists "$v" || fail "a podman volume named $v exists already: this test would use and remove it"
    volumes+=("$v")
  done
  played+=("$manifest")
  podman kube play --network none --configmap "$configmap" "$manifest" >"$work/play.log" 2>&1 ||
    { cat "$work/play.log"; fail "podman kube play $manifest failed"; }
}

# --- the sidecar: deploy/kubernetes/deployment.yaml ------------------------------------------

check_sidecar() {
  say "sidecar: deploy/kubernetes/deployment.yaml + configmap.yaml"
  local dir=$work/sidecar
  mkdir -p "$dir"
  swap_images deploy/kubernetes/deployment.yaml "$dir/deployment.yaml"
  swap_images deploy/kubernetes/configmap.yaml "$dir/configmap.yaml"
  play "$dir/deployment.yaml" "$dir/configmap.yaml"
  local lw=shop-pod-0-lockwatch app=shop-pod-0-app
  wait_for 90 "sample of the JVM by the sidecar" metrics_have $lw 'lockwatch_target_up{target="BlockedSpike"} 1'
  check_locked_down $app 10001
  check_locked_down $lw 10001
  # The sidecar found the JVM through the shared PID namespace, its /tmp through /proc/PID/root.
  get $lw 9465 /api/v1/targets | grep '"hsperfdata":"/proc/[0-9]*/root/tmp/hsperfdata_app/' >/dev/null ||
    fail "the sidecar does not read the JVM's hsperfdata through /proc/PID/root"

  start_prometheus $lw
  wait_for 60 "calm baseline in Prometheus" prom_query $lw \
    'count_over_time(target:lockwatch_threads_blocked:sum{target="BlockedSpike"}[1m]) >= 15'
  prom_query $lw 'target:lockwatch_threads_blocked:sum{target="BlockedSpike"} == 0' || fail "BLOCKED threads before the spike"
  if prom_alert $lw LockwatchBlockedThreadsSpike target=BlockedSpike; then fail "the spike alert fired before the spike"; fi
  podman exec $app sh -c ': > /tmp/spike'
  wait_for 60 "lock named in /metrics" metrics_have $lw \
    'lockwatch_lock_waiters{kind="monitor",lock_class="PriceCache",site="PriceCache.refresh",target="BlockedSpike"} 15'
  wait_for 90 "LockwatchBlockedThreadsSpike alert" prom_alert $lw LockwatchBlockedThreadsSpike target=BlockedSpike severity=warning
  say "sidecar: /metrics names PriceCache at PriceCache.refresh; Prometheus with the shipped rules fired LockwatchBlockedThreadsSpike"
  kill "$prometheus_pid" 2>/dev/null || true
  wait "$prometheus_pid" 2>/dev/null || true
  prometheus_pid=""
  check_sigterm $lw
  kube_down "$dir/deployment.yaml"
}

# --- without a shared PID namespace: deploy/kubernetes/no-shared-pid/ -----------------------

check_no_shared_pid() {
  say "no-shared-pid: deploy/kubernetes/no-shared-pid/"
  local dir=$work/no-shared-pid
  mkdir -p "$dir"
  swap_images deploy/kubernetes/no-shared-pid/deployment.yaml "$dir/deployment.yaml"
  swap_images deploy/kubernetes/no-shared-pid/configmap.yaml "$dir/configmap.yaml"
  play "$dir/deployment.yaml" "$dir/configmap.yaml"
  local lw=shop-pod-0-lockwatch app=shop-pod-0-app
  wait_for 90 "sample through the shared /tmp" metrics_have $lw 'lockwatch_target_up{target="lockwatch"} 1'
  [ "$(podman exec $app cat /proc/1/comm)" = java ] || fail "the JVM is not PID 1 of the app container"
  check_locked_down $app 10001
  check_locked_down $lw 10001
  podman exec $app sh -c ': > /tmp/spike'
  wait_for 60 "lock named in /metrics" metrics_have $lw 'lock_class="PriceCache",site="PriceCache.refresh",target="lockwatch"'
  say "no-shared-pid: pid 1 sampled through the shared /tmp, lock named"
  check_sigterm $lw
  kube_down "$dir/deployment.yaml"
}

kube_down() {
  podman kube down "$1" >"$work/down.log" 2>&1 || { cat "$work/down.log"; fail "podman kube down $1 failed"; }
  local v
  for v in $(play_volumes "$1"); do podman volume rm -f "$v" >/dev/null 2>&1 || true; done
}

run_checks() {
  check_sidecar
  check_no_shared_pid
  # shellcheck source=tests/pod/node_agent.sh
  . tests/pod/node_agent.sh
  check_node_agent
}
