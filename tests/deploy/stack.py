"""Readers for the deployment stack's files, shared by the tests under `tests/deploy/`.

The stack (docker-compose.yml, otel-collector.yaml, prometheus.yml, prometheus/rules.yml, the
Grafana provisioning and dashboards) cannot run on the CI machine: no Docker engine, no
Collector, Jaeger or Grafana. So the tests read the files themselves and check what can be
checked without the services; the PromQL runs against a real Prometheus
(`test_dashboard_queries.py`).

The PromQL helpers here are deliberately small lexers, not a parser: Prometheus itself is the
parser (promtool and the live query test). They only need to find the metric and label names
an expression mentions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
DASHBOARDS = ROOT / "dashboards"
PROVISIONING = DASHBOARDS / "provisioning"
SERVICES = ("jaeger", "otel-collector", "token", "agent", "load", "prometheus", "grafana")
"""The compose services, in start order."""

TARGET_LABELS = frozenset({"agent", "job", "instance"})
"""Labels Prometheus adds at scrape time (`agent` is set per target in prometheus.yml)."""

GRAFANA_BUILTINS = frozenset({"__rate_interval", "__range", "__interval"})
"""Grafana's own variables that the dashboards use."""

_KEYWORDS = frozenset(
    {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
     "offset", "bool", "inf", "nan"}
)  # fmt: skip
_GROUPING = r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)"
_STRING = r'"(?:[^"\\]|\\.)*"'
_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\$(\w+)")


def load_yaml(relative: str) -> Any:
    """A YAML file of the repository, parsed."""
    return yaml.safe_load((ROOT / relative).read_text())


def dashboards() -> dict[str, dict[str, Any]]:
    """Every dashboard JSON under dashboards/, by file name."""
    return {path.name: json.loads(path.read_text()) for path in sorted(DASHBOARDS.glob("*.json"))}


def panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, rows' collapsed children included."""
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


@dataclass(frozen=True)
class Query:
    """One PromQL expression of the stack and where it lives."""

    where: str
    """`<dashboard uid> / <panel title> / <refId>`, or `rules.yml / <alert>`."""
    expr: str
    exemplar: bool = False
    panel: tuple[str, str] | None = None
    """(dashboard uid, panel title) of a panel target."""
    rule: str | None = None
    """The alert or recording rule's name."""


def panel_queries() -> list[Query]:
    """Every target expression of every dashboard panel."""
    found = []
    for dashboard in dashboards().values():
        for panel in panels(dashboard):
            for target in panel.get("targets", []):
                where = f"{dashboard['uid']} / {panel['title']} / {target['refId']}"
                panel_id = (dashboard["uid"], panel["title"])
                found.append(Query(where, target["expr"], bool(target.get("exemplar")), panel_id))
    return found


def rule_queries() -> list[Query]:
    """Every alerting and recording rule expression of prometheus/rules.yml."""
    found = []
    for group in load_yaml("prometheus/rules.yml")["groups"]:
        for rule in group["rules"]:
            name = rule.get("alert") or rule.get("record")
            found.append(Query(f"rules.yml / {name}", rule["expr"], rule=name))
    return found


def variable_queries() -> list[tuple[str, str, str]]:
    """(dashboard uid, variable name, `label_values(...)` query) of every query variable."""
    found = []
    for dashboard in dashboards().values():
        for variable in dashboard["templating"]["list"]:
            if variable["type"] == "query":
                query = variable["query"]
                text = query["query"] if isinstance(query, dict) else query
                found.append((dashboard["uid"], variable["name"], text))
    return found


def parse_label_values(query: str) -> tuple[str, str]:
    """(series selector, label) of `label_values(selector, label)`."""
    match = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\s*\)\s*", query, re.S)
    assert match is not None, f"not a label_values(selector, label) query: {query}"
    return match.group(1), match.group(2)


def variables_used(expr: str) -> set[str]:
    """Names of the Grafana variables in an expression (`$x`, `${x}`, `${x:regex}`)."""
    return {a or b for a, b in _VARIABLE.findall(expr)}


def substitute(expr: str, values: dict[str, str]) -> str:
    """The expression with every Grafana variable replaced; an unknown one raises KeyError."""
    return _VARIABLE.sub(lambda m: values[m.group(1) or m.group(2)], expr)


def metric_names(expr: str) -> set[str]:
    """The metric names an expression selects (not functions, keywords or label names)."""
    text = re.sub(_STRING, '""', expr)
    text = re.sub(r"\{[^}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(_GROUPING, " ", text)
    names = set()
    for match in re.finditer(r"(?<![\w.$])[A-Za-z_:][A-Za-z0-9_:]*", text):
        following = text[match.end() :].lstrip()
        if following.startswith("(") or match.group().lower() in _KEYWORDS:
            continue
        names.add(match.group())
    return names


def label_names(expr: str) -> set[str]:
    """The label names an expression matches on or aggregates by."""
    text = re.sub(_STRING, '""', expr)
    names: set[str] = set()
    for block in re.findall(r"\{([^}]*)\}", text):
        names |= set(re.findall(r"([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)", block))
    for block in re.findall(_GROUPING, text):
        names |= set(re.findall(r"[A-Za-z_]\w*", block))
    return names


def compose_services() -> dict[str, dict[str, Any]]:
    """The services of docker-compose.yml."""
    return load_yaml("docker-compose.yml")["services"]


def host_port(spec: str) -> tuple[int, int]:
    """(host port, container port) of a compose `ports` entry such as `"4317:4317"`."""
    parts = str(spec).split("/")[0].split(":")
    return int(parts[-2]), int(parts[-1])


def mounts(service: dict[str, Any]) -> list[tuple[Path, str]]:
    """(host path, container path) of a service's bind mounts (short syntax); named volumes
    (a source without `.` or `/`) are not host paths and are left out."""
    found = []
    for volume in service.get("volumes", []):
        source, target, *_ = volume.split(":")
        if source.startswith((".", "/")):
            found.append(((ROOT / source).resolve(), target))
    return found


def host_path(service: dict[str, Any], container_path: str) -> Path | None:
    """The host file behind a container path, when a bind mount covers it."""
    for source, target in mounts(service):
        if container_path == target:
            return source
        if container_path.startswith(target.rstrip("/") + "/"):
            return source / container_path[len(target.rstrip("/")) + 1 :]
    return None


def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) of the Dockerfile, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


def image_file(container_path: str) -> Path | None:
    """The repository file the Dockerfile copies to `container_path` (COPY sources and
    destinations relative to the last WORKDIR), or None when no COPY puts it there."""
    workdir = "/"
    found = None
    for instruction, args in dockerfile():
        if instruction == "WORKDIR":
            workdir = args.rstrip("/") + "/"
        if instruction != "COPY":
            continue
        *sources, destination = args.split()
        base = destination if destination.startswith("/") else workdir + destination
        for source in sources:
            if source.endswith("/"):  # a folder: its content lands under the destination
                if container_path.startswith(base.rstrip("/") + "/"):
                    found = ROOT / source / container_path[len(base.rstrip("/")) + 1 :]
            else:  # a file, copied into a folder (`dest/`) or to a file name
                target = base + Path(source).name if base.endswith("/") else base
                if container_path == target:
                    found = ROOT / source
    return found


def duration_seconds(text: str) -> float:
    """A collector duration (`10ms`, `2500ms`, `1s`, `1m`) in seconds."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(us|ms|s|m|h)", str(text))
    assert match is not None, f"not a duration: {text}"
    unit = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}[match.group(2)]
    return float(match.group(1)) * unit


def spanmetrics_names(collector: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(metric names, label names) the collector's spanmetrics connector exposes through its
    Prometheus exporter: the namespace and the histogram unit make the names, the dimensions
    (dots become underscores) and the connector's defaults make the labels."""
    connector = collector["connectors"]["spanmetrics"]
    prefix = connector["namespace"].replace(".", "_")
    unit = {"s": "seconds", "ms": "milliseconds"}[connector["histogram"]["unit"]]
    names = {f"{prefix}_calls_total"} | {
        f"{prefix}_duration_{unit}_{suffix}" for suffix in ("bucket", "sum", "count")
    }
    labels = {"service_name", "span_name", "span_kind", "status_code", "le"}
    labels |= {d["name"].replace(".", "_") for d in connector.get("dimensions", [])}
    return names, labels
