#!/usr/bin/env python3
"""The node agent's DaemonSet as `podman run` flags, one per line, for tests/pod/node_agent.sh:
podman 4.3's `kube play` plays no DaemonSet and ignores hostPID, so its pod template's fields are
carried over one by one, and a field this script does not know fails it rather than being
dropped. Writes the ConfigMap's lockwatch.yaml into CONFIG_DIR; the hostPath log trees become
the fixture under LOG_DIR (pods/, containers/) standing in for the kubelet's.
  daemonset_flags.py NODE_AGENT_DIR IMAGE CONFIG_DIR LOG_DIR"""
import os
import sys

import yaml

KNOWN_POD = {"hostPID", "hostNetwork", "hostIPC", "automountServiceAccountToken", "securityContext", "tolerations",
             "priorityClassName", "terminationGracePeriodSeconds", "containers", "volumes"}
KNOWN_CONTAINER = {"name", "image", "args", "ports", "securityContext", "livenessProbe", "readinessProbe", "resources",
                   "volumeMounts"}


def main():
    folder, image, config_dir, log_dir = sys.argv[1:5]
    docs = [d for f in ("daemonset.yaml", "configmap.yaml")
            for d in yaml.safe_load_all(open(os.path.join(folder, f), encoding="utf-8")) if d]
    ds = next(d for d in docs if d["kind"] == "DaemonSet")
    configmaps = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ConfigMap"}
    spec = ds["spec"]["template"]["spec"]
    unknown = set(spec) - KNOWN_POD
    if unknown:
        sys.exit(f"daemonset_flags: pod fields {sorted(unknown)} have no podman flag here")
    (c,) = spec["containers"]
    unknown = set(c) - KNOWN_CONTAINER
    if unknown:
        sys.exit(f"daemonset_flags: container fields {sorted(unknown)} have no podman flag here")
    flags = []
    if spec.get("hostPID"):
        flags.append("--pid=host")
    if spec.get("hostNetwork") or spec.get("hostIPC"):
        sys.exit("daemonset_flags: the agent must not share the host's network or IPC namespace")
    sc = c.get("securityContext", {})
    flags.append(f"--user={sc.get('runAsUser', 0)}:{sc.get('runAsGroup', 0)}")
    for cap in sc.get("capabilities", {}).get("drop", []):
        flags.append(f"--cap-drop={cap}")
    for cap in sc.get("capabilities", {}).get("add", []):
        flags.append(f"--cap-add={cap}")
    if sc.get("allowPrivilegeEscalation") is False:
        flags.append("--security-opt=no-new-privileges")
    if sc.get("readOnlyRootFilesystem"):
        flags.append("--read-only")
    if sc.get("privileged"):
        sys.exit("daemonset_flags: privileged")
    # seccompProfile RuntimeDefault is podman's default profile: no flag.
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        v = volumes[m["name"]]
        ro = ":ro" if m.get("readOnly") else ""
        if "configMap" in v:
            text = configmaps[v["configMap"]["name"]]["data"]["lockwatch.yaml"]
            os.makedirs(config_dir, exist_ok=True)
            with open(os.path.join(config_dir, "lockwatch.yaml"), "w", encoding="utf-8") as f:
                f.write(text)
            flags.append(f"--volume={config_dir}:{m['mountPath']}{ro}")
        elif "emptyDir" in v:
            flags.append(f"--tmpfs={m['mountPath']}:rw,mode=1777,size={v['emptyDir'].get('sizeLimit', '64Mi').replace('i', '')}")
        elif "hostPath" in v:
            fixture = {"/var/log/pods": "pods", "/var/log/containers": "containers"}[v["hostPath"]["path"]]
            flags.append(f"--volume={os.path.join(log_dir, fixture)}:{m['mountPath']}{ro}")
        else:
            sys.exit(f"daemonset_flags: volume {m['name']} has no podman flag here")
    flags.append(image)
    flags += c.get("args", [])
    print("\n".join(flags))


if __name__ == "__main__":
    main()
