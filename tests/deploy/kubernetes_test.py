#!/usr/bin/env python3
# Checks the Kubernetes manifests of deploy/kubernetes as YAML: every container's security fields,
# the sidecar's port, probes, volumes and resources, the objects that refer to each other, the
# PrometheusRule against the plain rule file, the ConfigMaps' lockwatch.yaml with check-config,
# and the node agent's DaemonSet (node-agent/): least privilege and read-only host mounts.
#   kubernetes_test.py SOURCE_DIR LOCKWATCH_BINARY
import os
import re
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("kubernetes_test: needs PyYAML (Debian package python3-yaml; scripts/deps.sh installs it)")
    sys.exit(1)

from checks import check, report


def load_dir(directory):
    """{relative file: [documents]} for every .yaml/.yml below `directory`."""
    docs = {}
    for root, _, files in os.walk(directory):
        for name in sorted(files):
            if name.endswith((".yaml", ".yml")):
                path = os.path.join(root, name)
                rel = os.path.relpath(path, directory)
                try:
                    with open(path, encoding="utf-8") as f:
                        docs[rel] = [d for d in yaml.safe_load_all(f) if d is not None]
                except yaml.YAMLError as e:
                    check(False, f"{rel}: not valid YAML: {e}")
    return docs


def memory_bytes(q):
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi)?", str(q))
    if not m:
        return None
    return int(m.group(1)) * {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}[m.group(2)]


def cpu_millis(q):
    m = re.fullmatch(r"(\d+)(m)?", str(q))
    if not m:
        return None
    return int(m.group(1)) * (1 if m.group(2) else 1000)


def jvm_flags(container):
    words = list(container.get("command", [])) + list(container.get("args", []))
    for env in container.get("env", []):
        if env.get("name") in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "JAVA_OPTS"):
            words += str(env.get("value", "")).split()
    return words


def check_config(binary, text, where):
    """Runs `lockwatch check-config` on `text`; returns its stdout (the effective settings)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        r = subprocess.run([binary, "check-config", path], capture_output=True, text=True)
    finally:
        os.unlink(path)
    check(r.returncode == 0, f"{where}: lockwatch check-config failed: {r.stdout}{r.stderr}")
    return r.stdout


def check_pod(rel, name, pod, configmaps, binary, shared_pid):
    where = f"{rel} {name}"
    spec = pod["spec"]
    pod_sc = spec.get("securityContext", {})
    containers = spec.get("containers", [])
    check(len(containers) == 2, f"{where}: expected the app and the lockwatch containers, got {len(containers)}")
    check(not spec.get("initContainers") and not spec.get("ephemeralContainers"),
          f"{where}: init/ephemeral containers would need the same checks")
    check(pod_sc.get("seccompProfile", {}).get("type") == "RuntimeDefault", f"{where}: pod seccompProfile should be RuntimeDefault")
    check(pod_sc.get("runAsNonRoot") is True, f"{where}: pod securityContext.runAsNonRoot should be true")
    check(spec.get("automountServiceAccountToken") is False, f"{where}: automountServiceAccountToken should be false")
    check(not spec.get("hostPID") and not spec.get("hostNetwork") and not spec.get("hostIPC"),
          f"{where}: no host namespaces")
    if shared_pid:
        check(spec.get("shareProcessNamespace") is True, f"{where}: shareProcessNamespace should be true")
    else:
        check(not spec.get("shareProcessNamespace"), f"{where}: the no-shared-PID variant shares the PID namespace")

    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    ids = set()
    for c in containers:
        cw = f"{where} container {c.get('name')}"
        sc = c.get("securityContext", {})
        uid = sc.get("runAsUser", pod_sc.get("runAsUser"))
        gid = sc.get("runAsGroup", pod_sc.get("runAsGroup"))
        ids.add((uid, gid))
        check(isinstance(uid, int) and uid > 0, f"{cw}: runAsUser should be a non-root uid, got {uid}")
        check(isinstance(gid, int) and gid > 0, f"{cw}: runAsGroup should be a non-root gid, got {gid}")
        check(sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) is True, f"{cw}: runAsNonRoot should be true")
        check(sc.get("allowPrivilegeEscalation") is False, f"{cw}: allowPrivilegeEscalation should be false")
        check(sc.get("readOnlyRootFilesystem") is True, f"{cw}: readOnlyRootFilesystem should be true")
        check(not sc.get("privileged"), f"{cw}: privileged")
        caps = sc.get("capabilities", {})
        check(caps.get("drop") == ["ALL"], f"{cw}: capabilities.drop should be [ALL], got {caps.get('drop')}")
        check(not caps.get("add"), f"{cw}: adds capabilities {caps.get('add')}")
        for m in c.get("volumeMounts", []):
            check(m["name"] in volumes, f"{cw}: mounts volume {m['name']}, which the pod does not define")
    check(len(ids) == 1, f"{where}: the containers run as different uid/gid {sorted(ids, key=str)}: attach needs the same")

    by_name = {c["name"]: c for c in containers}
    app, lw = by_name.get("app"), by_name.get("lockwatch")
    if not check(app is not None and lw is not None, f"{where}: containers should be named app and lockwatch"):
        return

    # The application: a writable /tmp (hsperfdata, the attach socket, the trigger file), the
    # agent-loading flag, and the listener at start-up when lockwatch cannot signal it.
    mounts = {m["mountPath"]: m["name"] for m in app.get("volumeMounts", [])}
    check("/tmp" in mounts and "emptyDir" in volumes.get(mounts.get("/tmp"), {}),
          f"{where}: the app needs an emptyDir at /tmp (read-only root filesystem)")
    flags = jvm_flags(app)
    check("-XX:-EnableDynamicAgentLoading" in flags, f"{where}: the app's JVM flags lack -XX:-EnableDynamicAgentLoading")
    check("-XX:+DisableAttachMechanism" not in flags and "-XX:-UsePerfData" not in flags,
          f"{where}: the app's flags disable what lockwatch needs")
    if not shared_pid:
        check("-XX:+StartAttachListener" in flags, f"{where}: without a shared PID namespace the app needs -XX:+StartAttachListener")
        lw_mounts = {m["mountPath"]: m["name"] for m in lw.get("volumeMounts", [])}
        check(lw_mounts.get("/tmp") is not None and lw_mounts.get("/tmp") == mounts.get("/tmp"),
              f"{where}: without a shared PID namespace both containers must mount the same volume at /tmp")

    # lockwatch: its config from a ConfigMap of the same folder, its port, probes, incidents, resources.
    lw_mounts = {m["mountPath"]: m for m in lw.get("volumeMounts", [])}
    cfg_mount = lw_mounts.get("/etc/lockwatch")
    cfg = None
    if check(cfg_mount is not None, f"{where}: lockwatch has no /etc/lockwatch mount"):
        cm_name = volumes.get(cfg_mount["name"], {}).get("configMap", {}).get("name")
        cfg_text = configmaps.get(cm_name, {}).get("data", {}).get("lockwatch.yaml")
        if check(cfg_text is not None, f"{where}: no ConfigMap {cm_name} with lockwatch.yaml next to it"):
            cfg = yaml.safe_load(cfg_text) or {}
            settings = check_config(binary, cfg_text, f"{where} ConfigMap {cm_name}")
            check("listen 0.0.0.0:9465" in settings, f"{where}: ConfigMap {cm_name} should listen on 0.0.0.0:9465: {settings}")
    check(lw.get("args", [])[-2:] == ["--config", "/etc/lockwatch/lockwatch.yaml"],
          f"{where}: lockwatch args should end with --config /etc/lockwatch/lockwatch.yaml, got {lw.get('args')}")
    ports = {p.get("name"): p.get("containerPort") for p in lw.get("ports", [])}
    check(9465 in ports.values(), f"{where}: lockwatch should expose containerPort 9465, got {ports}")
    for probe in ("livenessProbe", "readinessProbe"):
        get = lw.get(probe, {}).get("httpGet", {})
        port = ports.get(get.get("port"), get.get("port"))
        check(get.get("path") == "/healthz" and port == 9465, f"{where}: lockwatch {probe} should GET /healthz on 9465, got {get}")
    if cfg is not None:
        incidents = cfg.get("incidents", {})
        if incidents.get("enabled", True):
            directory = incidents.get("directory", "/var/lib/lockwatch/incidents")
            m = lw_mounts.get(directory)
            check(m is not None and "emptyDir" in volumes.get(m["name"], {}),
                  f"{where}: the incident directory {directory} should be an emptyDir mount (read-only root)")
            if m is not None and "emptyDir" in volumes.get(m["name"], {}):
                limit = memory_bytes(volumes[m["name"]]["emptyDir"].get("sizeLimit", ""))
                budget = memory_bytes(str(incidents.get("max_bytes", "256Mi")).replace("iB", "i"))
                check(limit is not None and budget is not None and limit > budget,
                      f"{where}: the incidents emptyDir's sizeLimit should exceed incidents.max_bytes")
    res = lw.get("resources", {})
    req, lim = res.get("requests", {}), res.get("limits", {})
    mem_req, mem_lim = memory_bytes(req.get("memory")), memory_bytes(lim.get("memory"))
    cpu_req, cpu_lim = cpu_millis(req.get("cpu")), cpu_millis(lim.get("cpu"))
    check(mem_req is not None and 32 << 20 <= mem_req <= 48 << 20, f"{where}: lockwatch memory request {req.get('memory')} outside 32-48Mi")
    check(cpu_req is not None and 20 <= cpu_req <= 50, f"{where}: lockwatch cpu request {req.get('cpu')} outside 20-50m")
    check(mem_lim is not None and mem_req is not None and mem_lim > mem_req, f"{where}: lockwatch memory limit should exceed the request")
    check(cpu_lim is not None and cpu_req is not None and cpu_lim > cpu_req, f"{where}: lockwatch cpu limit should exceed the request")
    if cfg is not None and mem_lim is not None:
        ring = memory_bytes(str(cfg.get("ring", {}).get("max_bytes", "32Mi")).replace("iB", "i"))
        check(ring is not None and mem_lim > ring, f"{where}: the memory limit must hold a full ring (ring.max_bytes)")


def selects(selector, labels):
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


def check_folder(folder, docs, binary, shared_pid):
    all_docs = [(rel, d) for rel, ds in docs.items() for d in ds]
    for rel, d in all_docs:
        check(isinstance(d, dict) and d.get("apiVersion") and d.get("kind") and d.get("metadata", {}).get("name"),
              f"{folder}/{rel}: a document without apiVersion, kind or metadata.name")
        check(not d.get("metadata", {}).get("namespace"), f"{folder}/{rel}: sets a namespace; leave it to kubectl -n")
    configmaps = {d["metadata"]["name"]: d for _, d in all_docs if d.get("kind") == "ConfigMap"}
    deployments = [(rel, d) for rel, d in all_docs if d.get("kind") == "Deployment"]
    check(deployments, f"{folder}: no Deployment")
    for rel, d in deployments:
        check(selects(d["spec"]["selector"], d["spec"]["template"]["metadata"].get("labels", {})),
              f"{folder}/{rel}: the selector does not match the pod template's labels")
        check_pod(f"{folder}/{rel}", d["metadata"]["name"], d["spec"]["template"], configmaps, binary, shared_pid)
    return all_docs, deployments


def check_objects(folder, all_docs, pod, source, relabels_run):
    """PodMonitor, NetworkPolicy and PrometheusRule of a folder, against its Deployment's pod."""
    pod_labels = pod.get("metadata", {}).get("labels", {})
    lw = next((c for c in pod.get("spec", {}).get("containers", []) if c["name"] == "lockwatch"), {})
    lw_ports = {p.get("name"): p.get("containerPort") for p in lw.get("ports", [])}
    for _, d in all_docs:
        kind = d.get("kind")
        where = f"{folder} {kind} {d.get('metadata', {}).get('name')}"
        if kind == "PodMonitor":
            check(d["apiVersion"] == "monitoring.coreos.com/v1", f"{where}: apiVersion should be monitoring.coreos.com/v1")
            check(selects(d["spec"]["selector"], pod_labels), f"{where}: its selector does not select the Deployment's pods")
            eps = d["spec"].get("podMetricsEndpoints", [])
            check(len(eps) == 1 and lw_ports.get(eps[0].get("port")) == 9465 and eps[0].get("path", "/metrics") == "/metrics",
                  f"{where}: the endpoint should be lockwatch's named port (9465) and /metrics, got {eps}")
            check(d["spec"].get("sampleLimit", 0) >= SERIES_PER_TARGET + 1,
                  f"{where}: sampleLimit below one target's {SERIES_PER_TARGET} series + build_info")
            relabel = [r for e in eps for r in e.get("metricRelabelings", [])
                       if r.get("sourceLabels") == ["target"] and r.get("targetLabel") == "target" and r.get("regex") == "lockwatch"]
            check(bool(relabel) == relabels_run,
                  f"{where}: the target named 'lockwatch' (lockwatch's own command line) should be relabelled only without a shared PID namespace")
        elif kind == "NetworkPolicy":
            spec = d["spec"]
            check(selects(spec["podSelector"], pod_labels), f"{where}: does not select the Deployment's pods")
            check("Ingress" in spec.get("policyTypes", []), f"{where}: policyTypes should include Ingress")
            opened = False
            for rule in spec.get("ingress", []):
                ports = [p.get("port") for p in rule.get("ports", [])]
                if ports and 9465 not in ports and "metrics" not in ports:
                    continue
                opened = True
                peers = rule.get("from", [])
                check(ports and peers, f"{where}: a rule lets any peer or any port reach 9465: {rule}")
                for peer in peers:
                    check("ipBlock" not in peer and peer.get("namespaceSelector", {}).get("matchLabels")
                          and peer.get("podSelector", {}).get("matchLabels"),
                          f"{where}: 9465 should be open to Prometheus pods of its namespace only, got {peer}")
            check(opened, f"{where}: no rule lets Prometheus reach 9465")
        elif kind == "PrometheusRule":
            with open(os.path.join(source, "deploy", "prometheus", "lockwatch.rules.yml"), encoding="utf-8") as f:
                plain = yaml.safe_load(f)
            check(d["apiVersion"] == "monitoring.coreos.com/v1", f"{where}: apiVersion should be monitoring.coreos.com/v1")
            check(d["spec"].get("groups") == plain.get("groups"),
                  "prometheusrule.yaml and deploy/prometheus/lockwatch.rules.yml hold different rules")
            check(len(plain.get("groups", [])) > 0, "the rule file has no groups")


NODE_AGENT_CAPS = ["SETGID", "SETUID"]           # attach.as target: taking each JVM's uid and gid
NODE_AGENT_HOST_PATHS = {"/var/log/pods", "/var/log/containers"}
SERIES_PER_TARGET = 313                           # docs/metrics.md#cardinality, top_k 20


def check_node_agent(folder, docs, binary):
    """The DaemonSet of the node agent: least privilege (host PID namespace, two capabilities,
    read-only log trees, nothing else of the host), its config, and its PodMonitor."""
    all_docs = [(rel, d) for rel, ds in docs.items() for d in ds]
    for rel, d in all_docs:
        check(isinstance(d, dict) and d.get("apiVersion") and d.get("kind") and d.get("metadata", {}).get("name"),
              f"{folder}/{rel}: a document without apiVersion, kind or metadata.name")
        check(not d.get("metadata", {}).get("namespace"), f"{folder}/{rel}: sets a namespace; leave it to kubectl -n")
    kinds = [d.get("kind") for _, d in all_docs]
    check(not any(k in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "ServiceAccount") for k in kinds),
          f"{folder}: the agent needs no Kubernetes API access, so no RBAC objects")
    sets = [d for _, d in all_docs if d.get("kind") == "DaemonSet"]
    if not check(len(sets) == 1, f"{folder}: expected one DaemonSet, got {len(sets)}"):
        return
    ds = sets[0]
    where = f"{folder} DaemonSet {ds['metadata']['name']}"
    pod = ds["spec"]["template"]
    spec = pod["spec"]
    check(selects(ds["spec"]["selector"], pod["metadata"].get("labels", {})), f"{where}: the selector does not match the pod template")
    check(spec.get("hostPID") is True, f"{where}: hostPID should be true (the node's JVMs are found in its /proc)")
    check(not spec.get("hostNetwork") and not spec.get("hostIPC"), f"{where}: no host network or IPC namespace")
    check(not spec.get("shareProcessNamespace"), f"{where}: shareProcessNamespace means nothing with hostPID")
    check(spec.get("automountServiceAccountToken") is False, f"{where}: automountServiceAccountToken should be false (no API access)")
    check(spec.get("securityContext", {}).get("seccompProfile", {}).get("type") == "RuntimeDefault",
          f"{where}: pod seccompProfile should be RuntimeDefault")
    check(not spec.get("initContainers") and not spec.get("ephemeralContainers"), f"{where}: init/ephemeral containers would need the same checks")
    containers = spec.get("containers", [])
    if not check(len(containers) == 1, f"{where}: expected the lockwatch container only, got {len(containers)}"):
        return
    c = containers[0]
    sc = c.get("securityContext", {})
    caps = sc.get("capabilities", {})
    check(caps.get("drop") == ["ALL"], f"{where}: capabilities.drop should be [ALL], got {caps.get('drop')}")
    check(sorted(caps.get("add", [])) == NODE_AGENT_CAPS,
          f"{where}: capabilities.add should be exactly {NODE_AGENT_CAPS} (never SYS_PTRACE, SYS_ADMIN, DAC_OVERRIDE, KILL), got {caps.get('add')}")
    check(not sc.get("privileged"), f"{where}: privileged")
    check(sc.get("allowPrivilegeEscalation") is False, f"{where}: allowPrivilegeEscalation should be false")
    check(sc.get("readOnlyRootFilesystem") is True, f"{where}: readOnlyRootFilesystem should be true")
    check(sc.get("runAsUser") == 0, f"{where}: runAsUser should be 0 (lockwatch drops to attach.idle_uid itself), got {sc.get('runAsUser')}")

    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
    host_paths = {}
    for name, v in volumes.items():
        if "hostPath" in v:
            host_paths[name] = v["hostPath"].get("path")
            check(v["hostPath"].get("path") in NODE_AGENT_HOST_PATHS,
                  f"{where}: hostPath {v['hostPath'].get('path')} is more of the node than the log trees")
            check(v["hostPath"].get("type") == "Directory", f"{where}: hostPath {name} should have type Directory")
        else:
            check("emptyDir" in v or "configMap" in v, f"{where}: volume {name} should be an emptyDir or the ConfigMap")
    check(set(host_paths.values()) == NODE_AGENT_HOST_PATHS, f"{where}: expected hostPaths {sorted(NODE_AGENT_HOST_PATHS)}, got {host_paths}")
    for m in c.get("volumeMounts", []):
        check(m["name"] in volumes, f"{where}: mounts volume {m['name']}, which the pod does not define")
        if m["name"] in host_paths:
            check(m.get("readOnly") is True, f"{where}: the host's {host_paths[m['name']]} must be mounted readOnly")
            check(m["mountPath"] == host_paths[m["name"]], f"{where}: mount {m['name']} at the path the config names ({host_paths[m['name']]})")
        check(not m.get("mountPropagation") or m.get("mountPropagation") == "None", f"{where}: no mount propagation")
    check(c.get("args", [])[-2:] == ["--config", "/etc/lockwatch/lockwatch.yaml"], f"{where}: args should end with --config /etc/lockwatch/lockwatch.yaml")
    ports = {p.get("name"): p.get("containerPort") for p in c.get("ports", [])}
    check(9465 in ports.values() and not any(p.get("hostPort") for p in c.get("ports", [])),
          f"{where}: containerPort 9465 and no hostPort, got {c.get('ports')}")
    for probe in ("livenessProbe", "readinessProbe"):
        get = c.get(probe, {}).get("httpGet", {})
        check(get.get("path") == "/healthz" and ports.get(get.get("port"), get.get("port")) == 9465, f"{where}: {probe} should GET /healthz on 9465")
    res = c.get("resources", {})
    check(memory_bytes(res.get("limits", {}).get("memory")) and cpu_millis(res.get("limits", {}).get("cpu")), f"{where}: needs memory and cpu limits")

    # Its config: attach as each target, Kubernetes labels from the mounted trees, incidents on the emptyDir.
    configmaps = {d["metadata"]["name"]: d for _, d in all_docs if d.get("kind") == "ConfigMap"}
    cfg_mount = mounts.get("/etc/lockwatch")
    cm_name = volumes.get(cfg_mount["name"], {}).get("configMap", {}).get("name") if cfg_mount else None
    cfg_text = configmaps.get(cm_name, {}).get("data", {}).get("lockwatch.yaml")
    cfg = {}
    if check(cfg_text is not None, f"{where}: no ConfigMap {cm_name} with lockwatch.yaml next to it"):
        cfg = yaml.safe_load(cfg_text) or {}
        settings = check_config(binary, cfg_text, f"{where} ConfigMap {cm_name}")
        check("listen 0.0.0.0:9465" in settings, f"{where}: the config should listen on 0.0.0.0:9465: {settings}")
        check("attach as each target" in settings, f"{where}: the config should say attach.as target: {settings}")
    kube = cfg.get("targets", {}).get("kubernetes", {})
    for key in ("pod_logs", "container_logs"):
        check(kube.get(key) in mounts and mounts[kube.get(key)]["name"] in host_paths,
              f"{where}: targets.kubernetes.{key} ({kube.get(key)}) should be a read-only hostPath mount")
    incidents = cfg.get("incidents", {})
    if incidents.get("enabled", True):
        m = mounts.get(incidents.get("directory", "/var/lib/lockwatch/incidents"))
        check(m is not None and "emptyDir" in volumes.get(m["name"], {}), f"{where}: the incident directory should be an emptyDir mount")
    ring = memory_bytes(str(cfg.get("ring", {}).get("max_bytes", "32Mi")).replace("iB", "i")) or 0
    corr = memory_bytes(str(cfg.get("analysis", {}).get("max_bytes", "32Mi")).replace("iB", "i")) or 0
    max_targets = cfg.get("targets", {}).get("max", 64)
    check(ring * max_targets <= 4 * (memory_bytes(res.get("limits", {}).get("memory")) or 0),
          f"{where}: {max_targets} full rings of ring.max_bytes are far past the memory limit")

    pod_labels = pod["metadata"].get("labels", {})
    monitors = [d for _, d in all_docs if d.get("kind") == "PodMonitor"]
    if check(len(monitors) == 1, f"{folder}: expected one PodMonitor"):
        pm = monitors[0]
        check(selects(pm["spec"]["selector"], pod_labels), f"{folder} PodMonitor: does not select the DaemonSet's pods")
        eps = pm["spec"].get("podMetricsEndpoints", [])
        ok = len(eps) == 1 and ports.get(eps[0].get("port")) == 9465
        if check(ok, f"{folder} PodMonitor: the endpoint should be the agent's named port 9465, got {eps}"):
            ep = eps[0]
            check(ep.get("honorLabels") is True, f"{folder} PodMonitor: honorLabels must be true, or the JVMs' namespace/pod/container become exported_*")
            dropped = [r for r in ep.get("relabelings", []) if r.get("action") == "labeldrop"]
            check(any(re.fullmatch(r.get("regex", ""), name) for r in dropped for name in ("namespace", "pod", "container")),
                  f"{folder} PodMonitor: the agent pod's namespace/pod/container target labels should be dropped")
        bound = max_targets * SERIES_PER_TARGET + 2
        check(pm["spec"].get("sampleLimit", 0) >= bound,
              f"{folder} PodMonitor: sampleLimit {pm['spec'].get('sampleLimit')} below targets.max x {SERIES_PER_TARGET} + 2 = {bound}")
    policies = [d for _, d in all_docs if d.get("kind") == "NetworkPolicy"]
    for d in policies:
        check(selects(d["spec"]["podSelector"], pod_labels), f"{folder} NetworkPolicy: does not select the agent's pods")
        for rule in d["spec"].get("ingress", []):
            check(rule.get("from") and rule.get("ports"), f"{folder} NetworkPolicy: a rule lets any peer or port in: {rule}")


def main():
    source, binary = sys.argv[1], sys.argv[2]
    base = os.path.join(source, "deploy", "kubernetes")
    top = {rel: ds for rel, ds in load_dir(base).items() if os.sep not in rel}
    variant = load_dir(os.path.join(base, "no-shared-pid"))
    check(variant, "deploy/kubernetes/no-shared-pid holds no manifests")
    for name in ("deployment.yaml", "deployment-annotations.yaml", "configmap.yaml", "podmonitor.yaml",
                 "networkpolicy.yaml", "prometheusrule.yaml"):
        check(name in top, f"deploy/kubernetes/{name} is missing")

    all_docs, deployments = check_folder("deploy/kubernetes", top, binary, shared_pid=True)
    check_folder("deploy/kubernetes/no-shared-pid", variant, binary, shared_pid=False)
    pods = {rel: d["spec"]["template"] for rel, d in deployments}

    # The annotation variant is the same Deployment plus scrape annotations for lockwatch's port.
    if "deployment.yaml" in pods and "deployment-annotations.yaml" in pods:
        plain = top["deployment.yaml"][0]
        annotated = yaml.safe_load(yaml.safe_dump(top["deployment-annotations.yaml"][0]))
        notes = annotated["spec"]["template"]["metadata"].pop("annotations", {})
        check(annotated == plain, "deployment-annotations.yaml differs from deployment.yaml in more than the annotations")
        check(notes.get("prometheus.io/scrape") == "true" and notes.get("prometheus.io/port") == "9465"
              and notes.get("prometheus.io/path") == "/metrics",
              f"deployment-annotations.yaml: scrape annotations should name port 9465 and /metrics, got {notes}")
        check("annotations" not in plain["spec"]["template"]["metadata"],
              "deployment.yaml has pod annotations: both scraping ways would scrape it")

    check_objects("deploy/kubernetes", all_docs, pods.get("deployment.yaml", {}), source, relabels_run=False)
    variant_docs = [(rel, d) for rel, ds in variant.items() for d in ds]
    variant_pod = next((d["spec"]["template"] for _, d in variant_docs if d.get("kind") == "Deployment"), {})
    check(any(d.get("kind") == "PodMonitor" for _, d in variant_docs), "no-shared-pid: no PodMonitor")
    check_objects("deploy/kubernetes/no-shared-pid", variant_docs, variant_pod, source, relabels_run=True)

    agent = load_dir(os.path.join(base, "node-agent"))
    check(agent, "deploy/kubernetes/node-agent holds no manifests")
    check_node_agent("deploy/kubernetes/node-agent", agent, binary)

    count = sum(len(v) for group in (top, variant, agent) for v in group.values())
    return report(f"kubernetes manifests: {count} documents ok")


if __name__ == "__main__":
    sys.exit(main())
