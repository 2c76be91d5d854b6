#!/usr/bin/env python3
# Checks deploy/docker/Dockerfile without a container engine: the runtime stage's packages provide
# every shared library of the two built binaries (lockwatch and the lockwatch-daemon beside it),
# and the image runs lockwatch as a non-root user.
#   dockerfile_test.py SOURCE_DIR LOCKWATCH_BINARY
import os
import re
import shlex
import subprocess
import sys

from checks import check, report


def instructions(path):
    """(instruction, arguments) pairs of a Dockerfile: comments dropped, continuations joined."""
    out, pending = [], ""
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if pending and line.lstrip().startswith("#"):
                continue  # a comment line inside a continued instruction
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            text = (pending + line).strip()
            pending = ""
            word, _, rest = text.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def stages(instrs):
    """Splits instructions at each FROM: [(from_args, [instructions])]."""
    result = []
    for word, rest in instrs:
        if word == "FROM":
            result.append((rest, []))
        elif result:
            result[-1][1].append((word, rest))
    return result


def apt_packages(run_args):
    """Package names given to `apt-get install` in a RUN instruction."""
    packages = []
    for command in re.split(r"&&|;", run_args):
        words = shlex.split(command)
        words = [w for w in words if "=" not in w or w.startswith("-")]  # drop VAR=value prefixes
        if "apt-get" in words and "install" in words:
            after = words[words.index("install") + 1:]
            packages += [w for w in after if not w.startswith("-")]
    return packages


def exec_form(args):
    import json
    try:
        value = json.loads(args)
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def run(argv):
    return subprocess.run(argv, capture_output=True, text=True)


def package_of(path):
    """The Debian package that ships a library path, trying the usr-merged spellings too."""
    candidates = [path, os.path.realpath(path)]
    for p in list(candidates):
        if p.startswith("/usr/"):
            candidates.append(p[len("/usr"):])
        else:
            candidates.append("/usr" + p)
    for p in candidates:
        r = run(["dpkg", "-S", p])
        if r.returncode == 0:
            # "libfmt9:amd64: /usr/lib/x86_64-linux-gnu/libfmt.so.9.1.0"
            return r.stdout.split(":")[0].strip()
    return None


def depends_closure(roots):
    """The packages `roots` pull in through Depends and Pre-Depends (every alternative), as dpkg
    knows them on this machine; returns (closure, packages dpkg does not know)."""
    seen, unknown, todo = set(), set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        r = run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", name])
        if r.returncode != 0:
            unknown.add(name)
            continue
        seen.add(name)
        for part in r.stdout.replace("|", ",").split(","):
            dep = part.strip().split(" ")[0].split(":")[0]
            if dep and dep not in seen:
                todo.append(dep)
    return seen, unknown


def ldd_libraries(binary):
    r = run(["ldd", binary])
    check(r.returncode == 0, f"ldd {binary} failed: {r.stderr.strip()}")
    libs = []
    for line in r.stdout.splitlines():
        m = re.search(r"=>\s*(/\S+)", line) or re.match(r"\s*(/\S+)\s", line)
        if m:
            libs.append(m.group(1))
    return libs


def deps_sh_packages(source):
    text = open(os.path.join(source, "scripts", "deps.sh"), encoding="utf-8").read()
    block = text[text.index("packages=(") + len("packages=("):]
    block = block[: block.index("\n)")]
    words = []
    for line in block.splitlines():
        words += line.split("#")[0].split()
    return set(words)


def main():
    source, binary = sys.argv[1], sys.argv[2]
    dockerfile = os.path.join(source, "deploy", "docker", "Dockerfile")
    all_stages = stages(instructions(dockerfile))

    # Multi-stage: a Debian 12 build stage and a debian:12-slim runtime stage, last.
    check(len(all_stages) >= 2, f"expected a build and a runtime stage, got {len(all_stages)} FROM lines")
    build_from, build = all_stages[0]
    runtime_from, runtime = all_stages[-1]
    check(re.fullmatch(r"debian:(12|bookworm)\s+AS\s+build", build_from, re.I) is not None,
          f"first stage should be 'debian:12 AS build', got '{build_from}'")
    check(re.match(r"debian:(12|bookworm)-slim(\s|$)", runtime_from) is not None,
          f"runtime stage should be FROM debian:12-slim, got '{runtime_from}'")

    # The build stage installs building packages that scripts/deps.sh lists, and no JDK, test or
    # bench package; it builds Release without tests and benchmarks.
    deps = deps_sh_packages(source)
    build_pkgs = [p for w, a in build if w == "RUN" for p in apt_packages(a)]
    check(build_pkgs, "the build stage installs no packages")
    for p in build_pkgs:
        check(p in deps, f"build stage package {p} is not in scripts/deps.sh")
        check(not re.match(r"(openjdk|catch2|libbenchmark|clang|prometheus$|curl)", p),
              f"build stage installs {p}, which only the tests or benchmarks need")
    build_runs = " ".join(a for w, a in build if w == "RUN")
    for flag in ("-DCMAKE_BUILD_TYPE=Release", "-DLOCKWATCH_BUILD_TESTS=OFF", "-DLOCKWATCH_BUILD_BENCH=OFF"):
        check(flag in build_runs, f"the build stage's cmake lacks {flag}")

    # Every file the Dockerfile copies from the context exists.
    for word, args in build + runtime:
        if word == "COPY" and "--from=" not in args:
            for src in shlex.split(args)[:-1]:
                check(os.path.exists(os.path.join(source, src)), f"COPY source {src} does not exist")

    # The runtime stage: its packages provide every library ldd reports, and are all needed.
    runtime_pkgs = [p for w, a in runtime if w == "RUN" for p in apt_packages(a)]
    check(runtime_pkgs, "the runtime stage installs no packages")
    for p in runtime_pkgs:
        check(not p.endswith("-dev") and "jdk" not in p and "jre" not in p,
              f"runtime stage installs {p}: a build-time or Java package")
    closure, unknown = depends_closure(runtime_pkgs)
    check(not unknown, f"dpkg does not know runtime packages {sorted(unknown)} (misspelt, or not "
                       "installed here: the build's -dev packages pull them in)")
    needed = {}
    sanitizer = re.compile(r"lib(asan|ubsan|lsan|tsan)\.so")
    daemon = os.path.join(os.path.dirname(binary), "lockwatch-daemon")
    for lib in ldd_libraries(binary) + ldd_libraries(daemon):
        if sanitizer.search(lib):
            continue  # a sanitizer build of the tests; the image is built without
        pkg = package_of(lib)
        if check(pkg is not None, f"no Debian package ships {lib}"):
            needed.setdefault(pkg, []).append(lib)
    check(needed, f"ldd reported no libraries for {binary}")
    for pkg, libs in sorted(needed.items()):
        check(pkg in closure, f"{', '.join(libs)} comes from {pkg}, which the runtime stage neither "
                              f"installs nor pulls in through a dependency")
    direct = set(needed)
    for p in runtime_pkgs:
        check(p in direct, f"runtime stage installs {p}, but the binary loads no library from it")

    # Entry point, user, port, config.
    entry = [exec_form(a) for w, a in runtime if w == "ENTRYPOINT"]
    check(entry == [["/usr/local/bin/lockwatch", "run"]],
          f'ENTRYPOINT should be ["/usr/local/bin/lockwatch", "run"] in exec form, got {entry}')
    cmd = [exec_form(a) for w, a in runtime if w == "CMD"]
    check(cmd == [["--config", "/etc/lockwatch/lockwatch.yaml"]],
          f'CMD should be ["--config", "/etc/lockwatch/lockwatch.yaml"], got {cmd}')
    copies = [a for w, a in runtime if w == "COPY"]
    for name in ("lockwatch", "lockwatch-daemon"):  # `lockwatch run` execs the one beside it
        check(any(re.match(rf"--from=build\s+\S+/{name}\s+/usr/local/bin/{name}$", a) for a in copies),
              f"the runtime stage does not copy the built {name} to /usr/local/bin/{name}")
    check(any(w == "EXPOSE" and a.split() == ["9465"] for w, a in runtime), "EXPOSE 9465 is missing")

    args = {}
    for w, a in runtime:
        if w == "ARG" and "=" in a:
            k, v = a.split("=", 1)
            args[k.strip()] = v.strip()
    users = [a for w, a in runtime if w == "USER"]
    if check(len(users) == 1, f"expected one USER in the runtime stage, got {users}"):
        user = re.sub(r"\$\{?(\w+)\}?", lambda m: args.get(m.group(1), m.group(0)), users[0])
        uid, _, gid = user.partition(":")
        check(uid.isdigit() and int(uid) != 0, f"USER should be a non-root numeric uid, got '{users[0]}' -> '{user}'")
        check(gid.isdigit() and int(gid) != 0, f"USER should name a non-root numeric gid, got '{users[0]}' -> '{user}'")
        check(args.get("LOCKWATCH_UID") == "10001" and args.get("LOCKWATCH_GID") == "10001",
              f"ARG LOCKWATCH_UID/LOCKWATCH_GID should default to 10001, got {args}")
    check(all("SHELL" != w for w, _ in runtime), "the runtime stage should not need a SHELL")

    # The configuration baked into the image loads, and listens on the exposed port for the pod.
    config = os.path.join(source, "deploy", "docker", "lockwatch.yaml")
    r = run([binary, "check-config", config])
    check(r.returncode == 0, f"lockwatch check-config {config}: {r.stdout}{r.stderr}")
    check("listen 0.0.0.0:9465" in r.stdout, f"the image's config should listen on 0.0.0.0:9465: {r.stdout}")

    return report(f"Dockerfile: runtime packages {runtime_pkgs} cover {len(needed)} library packages; ok")


if __name__ == "__main__":
    sys.exit(main())
