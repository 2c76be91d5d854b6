#!/usr/bin/env python3
"""A temporary copy of a shipped manifest for `podman kube play`, changed in three ways only:
  - the example images (registry.example.com/...) become the images built by the test;
  - container `ports` are dropped and probes name their port by number: podman 4.3 publishes
    every containerPort on the host (Kubernetes never does), which would bind the machine's
    interfaces; the test reaches the ports inside the pod's own network namespace instead;
  - one replica: podman 4.3 makes one named volume per emptyDir name and shares it between the
    replicas it plays, where Kubernetes gives each pod its own - two JVMs of the same pid number
    in one /tmp would overwrite each other's socket and hsperfdata file.
Everything else - security contexts, volumes, env, args, the ConfigMap - is the shipped file's,
which this script checks before writing the copy.
  swap_manifest.py SHIPPED COPY APP_IMAGE LOCKWATCH_IMAGE"""
import copy
import sys

import yaml

IMAGES = {"registry.example.com/shop:1.4.2": 3, "registry.example.com/lockwatch:0.1.0": 4}  # argv indexes


def containers_of(doc):
    spec = doc.get("spec", {})
    pod = spec.get("template", {}).get("spec") if "template" in spec else spec
    return (pod or {}).get("containers", [])


def changed(doc, images):
    doc = copy.deepcopy(doc)
    if doc.get("kind") == "Deployment":
        doc["spec"]["replicas"] = 1
    for c in containers_of(doc):
        if c.get("image") in images:
            c["image"] = images[c["image"]]
        ports = {p.get("name"): p.get("containerPort") for p in c.pop("ports", [])}
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            get = c.get(probe, {}).get("httpGet")
            if get and get.get("port") in ports:
                get["port"] = ports[get["port"]]
    return doc


def main():
    shipped, out, app, lockwatch = sys.argv[1:5]
    images = {k: sys.argv[v] for k, v in IMAGES.items()}
    with open(shipped, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    result = [changed(d, images) for d in docs]
    # The copy must be the shipped file but for exactly those fields.
    for before, after in zip(docs, result):
        undone = copy.deepcopy(after)
        if "replicas" in before.get("spec", {}):
            undone["spec"]["replicas"] = before["spec"]["replicas"]
        for c_after, c_before in zip(containers_of(undone), containers_of(before)):
            c_after["image"] = c_before.get("image")
            if "ports" in c_before:
                c_after["ports"] = c_before["ports"]
            for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
                if probe in c_before:
                    c_after[probe] = c_before[probe]
        if undone != before:
            sys.exit(f"swap_manifest: {shipped} would change in more than images and ports")
    with open(out, "w", encoding="utf-8") as f:
        yaml.safe_dump_all(result, f, sort_keys=False)


if __name__ == "__main__":
    main()
