# shellcheck shell=bash
# The node agent (deploy/kubernetes/node-agent/) against JVM containers of two uids, sourced by
# tests/pod/checks.sh. podman 4.3's `kube play` neither plays a DaemonSet nor honours hostPID,
# so the agent's container is started with `podman run` from the DaemonSet's own fields (image
# swapped, args, securityContext, volume mounts) read by tests/pod/daemonset_flags.py. The JVM
# "pods" are containers in kubelet-shaped cgroups (/kubepods/<qos>/pod<UID>/...), and a fixture
# log tree stands in for the kubelet's /var/log/pods and /var/log/containers.

node_cgroups=()   # the cgroups podman made as the JVMs' parents: removed by path at the end, deepest first

# The kubelet-shaped parents that do not exist yet (on this machine: all of them) are the test's.
note_new_cgroups() {
  local d
  for d in /kubepods /kubepods/besteffort /kubepods/burstable; do
    [ -d "/sys/fs/cgroup/pids$d" ] || [ -d "/sys/fs/cgroup$d" ] || node_cgroups=("$d" "${node_cgroups[@]}")
  done
}

# Below a pod cgroup podman leaves its own: conmon's ("conmon") and, until the container's
# cleanup has run, "libpod-<id>"; only empty cgroups can go, so a few tries.
node_cleanup() {
  local c d try
  for c in "${containers[@]}"; do podman rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  containers=()
  for try in 1 2 3 4 5; do
    for d in "${node_cgroups[@]}"; do
      for c in /sys/fs/cgroup/*/"$d" /sys/fs/cgroup/"$d"; do
        [ -d "$c" ] || continue
        find "$c" -mindepth 1 -depth -type d \( -name conmon -o -name 'libpod-*' \) -exec rmdir {} + 2>/dev/null || true
        rmdir "$c" 2>/dev/null || true
      done
    done
    ls -d /sys/fs/cgroup/*/"${node_cgroups[-1]:-/nonexistent}" >/dev/null 2>&1 || break
    sleep 0.5
  done
}

# A JVM container as a pod's would be: uid:gid $2, no capability, read-only root, /tmp a tmpfs,
# in the cgroup a kubelet gives pod $3 (none: outside any pod). Not in a $(...): the names it
# records are what the cleanup removes.
start_jvm() {
  local name=$1 uid=$2 parent=${3:-}
  local args=(-d --name "$name" --network none --user "$uid:$uid" --read-only --tmpfs /tmp:rw,mode=1777
              --cap-drop ALL --security-opt no-new-privileges)
  if [ -n "$parent" ]; then args+=(--cgroup-parent "$parent"); node_cgroups=("$parent" "${node_cgroups[@]}"); fi
  containers+=("$name")
  podman run "${args[@]}" "$app_ref" >/dev/null
}

container_id() { podman inspect --format '{{.Id}}' "$1"; }

# /var/log/pods/<namespace>_<pod>_<uid>/<container>/0.log for each container, and the kubelet's
# /var/log/containers/<pod>_<namespace>_<container>-<id>.log symlink when an id is given.
fixture_pod() {
  local logs=$1 ns=$2 pod=$3 uid=$4
  shift 4
  local spec name id
  for spec in "$@"; do
    name=${spec%%=*} id=${spec#*=}
    mkdir -p "$logs/pods/${ns}_${pod}_${uid}/$name"
    echo "2026-11-30T12:00:00.000000000Z stdout F started" >"$logs/pods/${ns}_${pod}_${uid}/$name/0.log"
    [ "$id" = "$spec" ] || ln -s "/var/log/pods/${ns}_${pod}_${uid}/$name/0.log" "$logs/containers/${pod}_${ns}_$name-$id.log"
  done
}

targets_json() { get lockwatch-pod-test-agent 9465 /api/v1/targets; }

# The /api/v1/targets entry of the target whose pid is $1, as `key=value` lines (kubernetes.* flattened).
target_of_pid() {
  targets_json | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["pid"] == int(sys.argv[1]):
        for k, v in t.items():
            if isinstance(v, dict):
                for kk, vv in v.items(): print(f"{k}.{kk}={vv}")
            else: print(f"{k}={v}")
        sys.exit(0)
sys.exit(1)' "$1"
}

check_node_agent() {
  say "node agent: deploy/kubernetes/node-agent/ in the host PID namespace"
  local dir=$work/node logs=$work/node/logs
  mkdir -p "$dir/config" "$logs/pods" "$logs/containers"
  note_new_cgroups

  local uid1 uid2 id1 id2 id3 idroot
  uid1=$(cat /proc/sys/kernel/random/uuid) uid2=$(cat /proc/sys/kernel/random/uuid)
  start_jvm lockwatch-pod-test-jvm-shop 10001 "/kubepods/besteffort/pod$uid1"
  start_jvm lockwatch-pod-test-jvm-billing 10002 "/kubepods/burstable/pod$uid2"
  start_jvm lockwatch-pod-test-jvm-nopod 10001
  start_jvm lockwatch-pod-test-jvm-root 0 "/kubepods/besteffort/pod$uid1"
  id1=$(container_id lockwatch-pod-test-jvm-shop) id2=$(container_id lockwatch-pod-test-jvm-billing)
  id3=$(container_id lockwatch-pod-test-jvm-nopod) idroot=$(container_id lockwatch-pod-test-jvm-root)
  # shop: two containers, told apart by /var/log/containers; billing: its only container.
  fixture_pod "$logs" shop shop-7d9f8c6b5-x2v4q "$uid1" "app=$id1" "envoy=0000000000000000000000000000000000000000000000000000000000000000"
  fixture_pod "$logs" billing billing-0 "$uid2" app
  : "$id3" "$idroot"

  # The agent, as the DaemonSet runs it, with its ConfigMap's lockwatch.yaml.
  python3 tests/pod/daemonset_flags.py deploy/kubernetes/node-agent "$lockwatch_ref" "$dir/config" "$logs" \
    >"$dir/flags" || fail "cannot read the DaemonSet"
  mapfile -t flags <"$dir/flags"
  containers+=(lockwatch-pod-test-agent)
  podman run -d --name lockwatch-pod-test-agent --network none "${flags[@]}" >/dev/null
  local agent=lockwatch-pod-test-agent
  local shop_pid billing_pid nopod_pid root_pid
  shop_pid=$(pid_of lockwatch-pod-test-jvm-shop) billing_pid=$(pid_of lockwatch-pod-test-jvm-billing)
  nopod_pid=$(pid_of lockwatch-pod-test-jvm-nopod) root_pid=$(pid_of lockwatch-pod-test-jvm-root)

  local shop='container="app",namespace="shop",pod="shop-7d9f8c6b5-x2v4q"'
  local billing='container="app",namespace="billing",pod="billing-0"'
  wait_for 90 "the shop JVM (uid 10001) sampled and labelled" metrics_have $agent "lockwatch_target_up{$shop,target="
  wait_for 60 "the billing JVM (uid 10002) sampled and labelled" metrics_have $agent "lockwatch_target_up{$billing,target="
  local m
  m=$(get $agent 9465 /metrics)
  echo "$m" | grep "lockwatch_target_up{$shop,target=\"BlockedSpike[-0-9]*\"} 1" >/dev/null || fail "the shop JVM is not up: $(echo "$m" | grep target_up)"
  echo "$m" | grep "lockwatch_target_up{$billing,target=\"BlockedSpike[-0-9]*\"} 1" >/dev/null || fail "the billing JVM is not up"
  # Every series of a placed JVM has all three labels - each on its own: a family's own labels
  # sort between them (container, form, kind, ..., namespace, pod).
  local shop_target with_target with_all
  shop_target=$(target_of_pid "$shop_pid" | sed -n 's/^target=//p')
  with_target=$(echo "$m" | grep -c "target=\"$shop_target\"")
  with_all=$(echo "$m" | grep "target=\"$shop_target\"" | grep 'container="app"' | grep 'namespace="shop"' |
    grep -c 'pod="shop-7d9f8c6b5-x2v4q"')
  [ "$with_target" = "$with_all" ] ||
    fail "a series of $shop_target lacks the pod labels: $(echo "$m" | grep "target=\"$shop_target\"" | grep -v 'namespace="shop"' | head -3)"

  # The JVM outside any pod: a target with its own label, no Kubernetes labels, and why.
  wait_for 30 "the JVM outside any pod in /api/v1/targets" target_of_pid "$nopod_pid"
  local nopod
  nopod=$(target_of_pid "$nopod_pid")
  echo "$nopod" | grep '^up=True' >/dev/null || fail "the JVM outside any pod is not sampled: $nopod"
  echo "$nopod" | grep "^kubernetes.error=its cgroup /libpod_parent/libpod-$id3 is not a Kubernetes pod's" >/dev/null ||
    fail "no reason for the missing labels: $nopod"
  local nopod_target
  nopod_target=$(echo "$nopod" | sed -n 's/^target=//p')
  echo "$m" | grep "lockwatch_target_up{target=\"$nopod_target\"} 1" >/dev/null || fail "$nopod_target should be up without pod labels"
  podman logs $agent >"$work/agent.log" 2>&1
  grep -q 'msg="kubernetes labels incomplete"' "$work/agent.log" || fail "no log line for the JVM without labels"

  # The root JVM is never looked into: the agent does not take uid 0.
  if target_of_pid "$root_pid" >/dev/null; then fail "the JVM running as root became a target"; fi

  # The agent at rest: nobody, no capability in effect; CAP_SETUID/CAP_SETGID permitted on the
  # sampling thread only.
  local apid t prm n_c0=0 n_threads=0
  apid=$(pid_of $agent)
  [ "$(status_field "$apid" Uid)" = "65534 65534 65534 65534" ] || fail "the agent runs as '$(status_field "$apid" Uid)'"
  [ "$(status_field "$apid" Gid)" = "65534 65534 65534 65534" ] || fail "the agent's gids are '$(status_field "$apid" Gid)'"
  [ "$(status_field "$apid" Groups)" = "" ] || fail "the agent keeps supplementary groups"
  [ "$(status_field "$apid" CapBnd)" = 00000000000000c0 ] || fail "the agent's bounding set is $(status_field "$apid" CapBnd)"
  [ "$(status_field "$apid" NoNewPrivs)" = 1 ] || fail "the agent lacks no_new_privs"
  for t in /proc/"$apid"/task/*; do
    n_threads=$((n_threads + 1))
    [ "$(sed -n 's/^CapEff:[[:space:]]*//p' "$t/status")" = 0000000000000000 ] || fail "agent thread ${t##*/} has capabilities in effect"
    prm=$(sed -n 's/^CapPrm:[[:space:]]*//p' "$t/status")
    case $prm in
      00000000000000c0) n_c0=$((n_c0 + 1)) ;;
      0000000000000000) ;;
      *) fail "agent thread ${t##*/} holds capabilities $prm" ;;
    esac
  done
  [ $n_c0 = 1 ] || fail "$n_c0 agent threads hold CAP_SETUID/CAP_SETGID; only the sampling thread should"
  say "node agent: JVMs of uids 10001 and 10002 sampled and labelled; at rest uid 65534, CapEff 0 in all $n_threads threads, CAP_SETUID+CAP_SETGID permitted in one"

  # The lock, with the pod's labels (in the exposition's alphabetical label order).
  podman exec lockwatch-pod-test-jvm-shop sh -c ': > /tmp/spike'
  wait_for 60 "the shop JVM's lock with its labels" metrics_have $agent \
    "lockwatch_lock_waiters{container=\"app\",kind=\"monitor\",lock_class=\"PriceCache\",namespace=\"shop\",pod=\"shop-7d9f8c6b5-x2v4q\",site=\"PriceCache.refresh\",target=\"$shop_target\"} 15"

  # The series bound: every target within 313 series, two daemon-wide ones.
  m=$(get $agent 9465 /metrics)
  local series targets
  series=$(echo "$m" | grep -vc '^#')
  targets=$(echo "$m" | grep -c '^lockwatch_target_up{')
  [ "$series" -le $((targets * 313 + 2)) ] || fail "$series series for $targets targets: over 313 per target"
  echo "$m" | grep '^lockwatch_targets_skipped 0' >/dev/null || fail "targets skipped below targets.max"

  # A pod that goes away takes its series with it.
  podman rm -f -t 0 lockwatch-pod-test-jvm-billing >/dev/null
  wait_for 30 "the billing pod's series to go" sh -c "! nsenter -t $apid -n curl -sf http://127.0.0.1:9465/metrics | grep 'pod=\"billing-0\"' >/dev/null"
  say "node agent: the lock labelled by pod; $series series for $targets targets; the gone pod's series removed"
  check_sigterm $agent
  node_cleanup
}
