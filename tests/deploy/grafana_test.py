#!/usr/bin/env python3
# Checks the structure of deploy/grafana/lockwatch-dashboard.json: importable JSON, the data source
# and target variables, every query on ${datasource}, the panels the dashboard promises, and only
# metric names that lockwatch exports (docs/metrics.md). Its queries run against a real Prometheus
# in tests/e2e/dashboard_test.cpp.
#   grafana_test.py SOURCE_DIR [LOCKWATCH_BINARY]
import json
import os
import re
import sys

from checks import check, report


def all_panels(panels):
    for p in panels:
        yield p
        yield from all_panels(p.get("panels", []))


def main():
    source = sys.argv[1]
    with open(os.path.join(source, "deploy", "grafana", "lockwatch-dashboard.json"), encoding="utf-8") as f:
        dash = json.load(f)
    with open(os.path.join(source, "docs", "metrics.md"), encoding="utf-8") as f:
        documented = set(re.findall(r"^\| `(lockwatch_\w+)` \|", f.read(), re.M))
    check(len(documented) >= 15, f"found only {len(documented)} metric families in docs/metrics.md")

    check(dash.get("schemaVersion", 0) >= 36, f"schemaVersion {dash.get('schemaVersion')} is older than 36")
    check(dash.get("uid") and dash.get("title"), "the dashboard needs a uid and a title")
    check("id" not in dash or dash["id"] is None, "a dashboard id ties the file to one Grafana; leave it out")
    variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
    ds = variables.get("datasource", {})
    check(ds.get("type") == "datasource" and ds.get("query") == "prometheus",
          "the dashboard needs a 'datasource' variable of type datasource for Prometheus")
    target = variables.get("target", {})
    query = target.get("query")
    query = query.get("query") if isinstance(query, dict) else query
    check(target.get("type") == "query" and query == "label_values(lockwatch_target_up, target)",
          f"the 'target' variable should be label_values(lockwatch_target_up, target), got {query}")
    # The node agent's series carry namespace and pod (docs/metrics.md): both are variables, All
    # by default (".*" also matches a sidecar's series, which have neither label).
    for name, query in (("namespace", "label_values(lockwatch_target_up, namespace)"),
                        ("pod", 'label_values(lockwatch_target_up{namespace=~"$namespace"}, pod)')):
        v = variables.get(name, {})
        q = v.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        check(v.get("type") == "query" and q == query and v.get("includeAll") and v.get("allValue") == ".*",
              f"the '{name}' variable should be {query}, All = .*, got {q}")
    for name, v in variables.items():
        if v.get("type") == "query":
            check(v.get("datasource", {}).get("uid") == "${datasource}", f"variable {name} should query ${{datasource}}")

    exprs, titles = [], []
    for p in all_panels(dash.get("panels", [])):
        if p.get("type") == "row":
            continue
        titles.append(p.get("title", ""))
        check(p.get("datasource", {}).get("uid") == "${datasource}", f"panel '{p.get('title')}' is not on ${{datasource}}")
        check(p.get("description"), f"panel '{p.get('title')}' has no description")
        check(set(p.get("gridPos", {})) >= {"x", "y", "w", "h"}, f"panel '{p.get('title')}' has no gridPos")
        targets = p.get("targets", [])
        check(targets, f"panel '{p.get('title')}' has no query")
        refs = [t.get("refId") for t in targets]
        check(len(set(refs)) == len(refs), f"panel '{p.get('title')}' repeats a refId: {refs}")
        for t in targets:
            expr = t.get("expr", "")
            exprs.append(expr)
            check(t.get("datasource", {}).get("uid") == "${datasource}", f"a query of '{p.get('title')}' is not on ${{datasource}}")
            check("$target" in expr or "${target}" in expr, f"'{p.get('title')}': {expr} ignores the target variable")
            for name in ("namespace", "pod"):
                check(f'{name}=~"${name}"' in expr, f"'{p.get('title')}': {expr} ignores the {name} variable")
            # Per target means per pod too: two pods' JVMs may share a target name.
            for by in re.findall(r"by \(([^)]*)\)", expr):
                names = [n.strip() for n in by.split(",")]
                check("target" not in names or {"namespace", "pod"} <= set(names),
                      f"'{p.get('title')}': by ({by}) keeps target but not namespace and pod")
            for metric in re.findall(r"\b(lockwatch_\w+)", expr):
                base = re.sub(r"_(bucket|sum|count)$", "", metric)
                check(base in documented, f"'{p.get('title')}': {metric} is not a metric of docs/metrics.md")
    ids = [p.get("id") for p in all_panels(dash.get("panels", []))]
    check(len(set(ids)) == len(ids), "panel ids repeat")

    # The panels promised: each needs a query on these metrics.
    joined = "\n".join(exprs)
    for what, pattern in [
        ("thread states", r'lockwatch_threads\{[^}]*\}\)'),
        ("BLOCKED by pool", r'lockwatch_pool_threads\{[^}]*state="BLOCKED"'),
        ("top hot locks by waiting site", r'topk\(\d+, sum by \([^)]*site[^)]*\) \(lockwatch_lock_waiters'),
        ("holder sites", r'holder_site[^)]*\) \(rate\(lockwatch_lock_holder_observations_total'),
        ("holder resolution", r"lockwatch_holder_resolution_total"),
        ("deadlocks", r"lockwatch_deadlocked_threads"),
        ("contended enters rate", r"rate\(lockwatch_jvm_monitor_contended_enters_total"),
        ("safepoint time", r"rate\(lockwatch_jvm_safepoint_seconds_total"),
        ("sample duration quantile", r"histogram_quantile\([^,]+, sum by \([^)]*le[^)]*\) \(rate\(lockwatch_sample_duration_seconds_bucket"),
        ("samples by result", r"sum by \([^)]*result[^)]*\) \(rate\(lockwatch_samples_total"),
        ("incidents", r"lockwatch_incidents_total"),
    ]:
        check(re.search(pattern, joined), f"no panel shows {what} (/{pattern}/)")

    return report(f"dashboard: {len(titles)} panels, {len(exprs)} queries ok")


if __name__ == "__main__":
    sys.exit(main())
