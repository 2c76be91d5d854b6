#!/usr/bin/env python3
# Checks deploy/systemd/lockwatch.service: runs lockwatch as a non-root user with its config, with
# the hardening options docs/deployment.md promises, the incident directory as the only writable
# path, and a unit systemd-analyze accepts (when systemd-analyze is installed).
#   systemd_test.py SOURCE_DIR LOCKWATCH_BINARY
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

from checks import check, report


def parse_unit(text):
    """{section: {key: [values in order]}}; an empty assignment is kept as ''."""
    sections, current = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        m = re.fullmatch(r"\[(\w+)\]", line)
        if m:
            current = sections.setdefault(m.group(1), {})
            continue
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def main():
    source, binary = sys.argv[1], sys.argv[2]
    path = os.path.join(source, "deploy", "systemd", "lockwatch.service")
    text = open(path, encoding="utf-8").read()
    unit = parse_unit(text)
    service = unit.get("Service", {})

    def one(key):
        values = service.get(key, [])
        return values[-1] if values else None

    # Runs the daemon with the config file; the config it would read loads.
    start = shlex.split(one("ExecStart") or "")
    check(start[:2] == ["/usr/local/bin/lockwatch", "run"] and "--config" in start,
          f"ExecStart should be /usr/local/bin/lockwatch run --config FILE, got {start}")
    config = start[start.index("--config") + 1] if "--config" in start[:-1] else None
    check(config == "/etc/lockwatch/lockwatch.yaml", f"the unit should read /etc/lockwatch/lockwatch.yaml, got {config}")
    check(one("ExecReload") == "/bin/kill -HUP $MAINPID", "ExecReload should send SIGHUP (the daemon reloads on it)")

    # As the application's user and group, never root, with no capability.
    for key in ("User", "Group"):
        v = one(key)
        check(v and v not in ("root", "0"), f"{key}= should name the application's (non-root) {key.lower()}, got {v}")
    check(service.get("CapabilityBoundingSet") == [""], "CapabilityBoundingSet= should be empty")
    check(service.get("AmbientCapabilities", [""]) == [""], "AmbientCapabilities should be empty")

    # Hardening.
    expected = {"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
                "PrivateDevices": "yes", "ProtectKernelTunables": "yes", "ProtectKernelModules": "yes",
                "ProtectControlGroups": "yes", "RestrictSUIDSGID": "yes", "MemoryDenyWriteExecute": "yes",
                "LockPersonality": "yes", "RestrictNamespaces": "yes", "SystemCallArchitectures": "native"}
    for key, value in expected.items():
        check(one(key) == value, f"{key}= should be {value}, got {one(key)}")
    check(one("ProtectProc") in (None, "default"), "ProtectProc would hide the JVM's /proc entries")
    check(one("PrivateUsers") in (None, "no", "false"), "PrivateUsers would change the uid the JVM sees")
    families = (one("RestrictAddressFamilies") or "").split()
    check(set(families) == {"AF_UNIX", "AF_INET", "AF_INET6"},
          f"RestrictAddressFamilies should be AF_UNIX (attach) AF_INET AF_INET6 (HTTP), got {families}")

    # The incident directory of the shipped config is writable, and nothing else.
    with open(os.path.join(source, "deploy", "lockwatch.yaml"), encoding="utf-8") as f:
        m = re.search(r"^\s+directory:\s*(\S+)", f.read(), re.M)
    incidents = m.group(1) if m else None
    writable = " ".join(service.get("ReadWritePaths", [])).split()
    check(incidents in [w.lstrip("-") for w in writable],
          f"ReadWritePaths should hold the incident directory {incidents}, got {writable}")
    check(all(w.lstrip("-").startswith("/var/lib/lockwatch") for w in writable), f"writable paths beyond lockwatch's: {writable}")
    state = " ".join(service.get("StateDirectory", [])).split()
    check(incidents and any(incidents == "/var/lib/" + s for s in state),
          f"StateDirectory should create {incidents} for User=, got {state}")

    # systemd's own verdict, on a copy that points at the built binary (the unit names the
    # installed path, which need not exist here).
    analyze = shutil.which("systemd-analyze")
    if analyze:
        with tempfile.TemporaryDirectory() as tmp:
            copy = os.path.join(tmp, "lockwatch.service")
            with open(copy, "w", encoding="utf-8") as f:
                f.write(text.replace("/usr/local/bin/lockwatch", binary))
            r = subprocess.run([analyze, "verify", copy], capture_output=True, text=True)
            # Without systemd as PID 1 verify still parses the unit; keep only the unit's own errors.
            problems = [l for l in (r.stdout + r.stderr).splitlines()
                        if "lockwatch.service" in l and not re.search(r"(System has not been booted|Failed to connect)", l)]
            check(not problems, "systemd-analyze verify: " + "; ".join(problems))
    else:
        print("systemd-analyze not installed: the unit's syntax was checked by this script only")

    return report("systemd unit ok")


if __name__ == "__main__":
    sys.exit(main())
