"""Every PromQL expression of the stack runs against a real Prometheus scraping a real agent.

The compose stack's pair on loopback: `zeroclaw-obs serve` of the agent the `agent` service
serves (`deploy/agent.yaml`), driven by `zeroclaw-obs load scenarios/ --target` at 10
turns a second with `--approve`, as the `load` service does; the server's own /metrics (on its
API port, no token) is the scrape target. A real Prometheus (Debian package `prometheus`)
scrapes it every second with prometheus.yml's agent job (its `agent` target label included),
stores exemplars, and evaluates prometheus/rules.yml. Then every dashboard panel target,
variable query and alert expression runs with Grafana's variables substituted: each must parse
and evaluate, the core panels must return series, the agent filter must select by the target
label, the alert rules must evaluate without error, and the latency exemplars must carry 32-hex
trace ids.

Skipped without `prometheus`, except in CI (`CI=true`), where that fails. Every wait is bounded
by `DEADLINE_S`; Prometheus, the load and the server are stopped in `finally`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from ..system import free_port, stop, system_binary
from .stack import (
    ROOT,
    Query,
    compose_services,
    image_file,
    load_yaml,
    panel_queries,
    parse_label_values,
    rule_queries,
    substitute,
    variable_queries,
)

DEADLINE_S = 40.0
LOAD_S = 45
"""Longer than the test: the load must still be serving when the queries run (a stopped
target's series go stale at once); the test stops it."""
VALUES = {
    "__rate_interval": "30s",
    "__range": "1m",
    "__interval": "5s",
    "agent": ".*",
    "tool": ".*",
}
CORE_PANELS = {
    ("zeroclaw-tool-latency", "Tool latency p95 by tool"),
    ("zeroclaw-tool-latency", "Tool calls per second by outcome"),
    ("zeroclaw-tool-latency", "Slowest tools (p95 over the time range)"),
    ("zeroclaw-turns", "Turn outcomes per second"),
    ("zeroclaw-turns", "LLM latency p50 / p95 by model"),
    ("zeroclaw-safety", "Redactions by rule and surface"),
    ("zeroclaw-safety", "Approval decisions by tool and decision"),
}
"""Panels the load must fill: latency, throughput, outcomes, redactions, approvals, LLM."""
TOKEN = "dashboard-test-token-0123456789"
TRACE_ID = re.compile(r"[0-9a-f]{32}")


def zeroclaw_obs() -> list[str]:
    """The console script beside this interpreter, else the same entry point through it."""
    script = Path(sys.executable).with_name("zeroclaw-obs")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from zeroclaw_obs.cli import main; sys.exit(main())"]


def agent_job() -> tuple[dict[str, Any], dict[str, str]]:
    """prometheus.yml's agent scrape job and its target labels."""
    for job in load_yaml("prometheus.yml")["scrape_configs"]:
        for static in job["static_configs"]:
            if "agent" in static.get("labels", {}):
                return job, static["labels"]
    raise AssertionError("prometheus.yml has no target with an `agent` label")


def served_agent() -> Path:
    """The agent file the compose `agent` service serves, in this repository."""
    command = compose_services()["agent"]["command"]
    found = image_file(command[command.index("--scenario") + 1])
    assert found is not None, "the agent file is not copied into the image"
    return found


def prometheus_config(metrics_port: int) -> dict[str, Any]:
    """prometheus.yml's agent job pointed at the loopback server, every second, with the rules."""
    job, labels = agent_job()
    return {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(ROOT / rule) for rule in load_yaml("prometheus.yml")["rule_files"]],
        "scrape_configs": [
            {
                **job,
                "static_configs": [{"targets": [f"127.0.0.1:{metrics_port}"], "labels": labels}],
            }
        ],
    }


def start(args: list[str], log: Path, **kwargs: Any) -> subprocess.Popen:
    with log.open("w") as out:
        return subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, **kwargs)


class PrometheusApi:
    """Blocking calls to a Prometheus HTTP API, with the logs to show when a wait runs out."""

    def __init__(self, client: httpx.Client, base: str, logs: list[Path], deadline: float):
        self._client = client
        self._base = base
        self._logs = logs
        self._deadline = deadline

    def get(self, path: str, **params: str) -> dict[str, Any]:
        return self._client.get(f"{self._base}/api/v1/{path}", params=params).json()

    def ready(self) -> bool:
        return self._client.get(f"{self._base}/-/ready").is_success

    def query(self, expr: str, at: float) -> dict[str, Any]:
        return self.get("query", query=expr, time=f"{at:.3f}")

    def wait(self, what: str, check: Any) -> Any:
        """Call `check` until it returns something truthy, or fail at the deadline."""
        last: Any = None
        while time.monotonic() < self._deadline:
            try:
                last = check()
            except (httpx.TransportError, ValueError) as exc:  # not up, or not ready yet
                last = exc
            else:
                if last:
                    return last
            time.sleep(0.25)
        tails = "\n".join(f"--- {log.name}\n{log.read_text()[-2000:]}" for log in self._logs)
        pytest.fail(f"timed out waiting for {what}; last: {last!r}\n{tails}")


def core(query: Query) -> bool:
    return query.panel in CORE_PANELS


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Any:
    """A served agent driven by `load --target`, and a Prometheus scraping the server, until
    every core panel has data."""
    prometheus_bin = system_binary("prometheus")
    tmp = tmp_path_factory.mktemp("stack")
    agent_port, web_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    serve_log, load_log = tmp / "serve.log", tmp / "load.log"
    prometheus_log = tmp / "prometheus.log"
    config = tmp / "prometheus.yml"
    config.write_text(yaml.safe_dump(prometheus_config(agent_port)))
    token_file = tmp / "token"
    token_file.write_text(TOKEN + "\n")
    agent_url = f"http://127.0.0.1:{agent_port}"
    serve = load = prometheus = None
    try:
        serve = start(
            [*zeroclaw_obs(), "serve", "--scenario", str(served_agent()), "--host", "127.0.0.1",
             "--port", str(agent_port), "--token-file", str(token_file), "--quiet"],
            serve_log, env=env, cwd=tmp,
        )  # fmt: skip
        prometheus = start(
            [prometheus_bin, f"--config.file={config}", f"--storage.tsdb.path={tmp / 'data'}",
             f"--web.listen-address=127.0.0.1:{web_port}", "--enable-feature=exemplar-storage"],
            prometheus_log,
        )  # fmt: skip
        with httpx.Client(timeout=5) as client:
            api = PrometheusApi(
                client,
                f"http://127.0.0.1:{web_port}",
                [serve_log, load_log, prometheus_log],
                time.monotonic() + DEADLINE_S,
            )
            api.wait(
                "the server to be healthy",
                lambda: client.get(f"{agent_url}/healthz").json()["status"] == "ok",
            )
            load = start(
                [*zeroclaw_obs(), "load", str(ROOT / "scenarios"), "--target", agent_url,
                 "--token-file", str(token_file), "--approve", "--rate", "10",
                 "--duration", str(LOAD_S), "--concurrency", "8", "--quiet"],
                load_log, env=env, cwd=tmp,
            )  # fmt: skip
            api.wait("Prometheus to be ready", api.ready)
            core_queries = [q for q in panel_queries() if core(q)]

            def core_panels_filled() -> bool:
                now = time.time()
                return all(
                    api.query(substitute(q.expr, VALUES), now)["data"]["result"]
                    for q in core_queries
                )

            api.wait("every core panel to return series", core_panels_filled)

            def rules_evaluated() -> list[dict[str, Any]]:
                groups = api.get("rules")["data"]["groups"]
                rules = [rule for group in groups for rule in group["rules"]]
                return rules if rules and all(r["health"] != "unknown" for r in rules) else []

            rules = api.wait("every rule to be evaluated", rules_evaluated)
            yield api, time.time(), rules
    finally:
        stop(prometheus)
        stop(load)
        stop(serve)


class TestDashboardQueries:
    def test_every_panel_and_alert_expression_evaluates(self, stack):
        """Each panel target and alert expression parses and evaluates (status success)."""
        api, at, _ = stack
        failed = {}
        for query in panel_queries() + rule_queries():
            answer = api.query(substitute(query.expr, VALUES), at)
            if answer["status"] != "success":
                failed[query.where] = answer.get("error")
        assert {} == failed

    def test_core_panels_return_series(self, stack):
        """Tool p95, calls by outcome, slowest tools, turn outcomes, LLM latency, redactions
        and approvals all have data from the load."""
        api, at, _ = stack
        core_queries = [q for q in panel_queries() if core(q)]
        assert CORE_PANELS == {q.panel for q in core_queries}
        empty = [
            q.where
            for q in core_queries
            if not api.query(substitute(q.expr, VALUES), at)["data"]["result"]
        ]
        assert [] == empty

    def test_agent_variable_selects_by_target_label(self, stack):
        """The agent variable's values are the scrape target's `agent` label, and filtering
        by it keeps the core panels' series, while an unknown agent empties them."""
        api, at, _ = stack
        _, labels = agent_job()
        for uid, name, text in variable_queries():
            selector, label = parse_label_values(text)
            result = api.query(f"count by ({label}) ({substitute(selector, VALUES)})", at)
            values = {series["metric"].get(label) for series in result["data"]["result"]}
            assert values and None not in values, (uid, name)
            if name == "agent":
                assert {labels["agent"]} == values
        for query in (q for q in panel_queries() if core(q)):
            chosen = substitute(query.expr, {**VALUES, "agent": labels["agent"]})
            other = substitute(query.expr, {**VALUES, "agent": "no-such-agent"})
            assert api.query(chosen, at)["data"]["result"], query.where
            assert [] == api.query(other, at)["data"]["result"], query.where

    def test_alert_rules_evaluate_without_error(self, stack):
        """Prometheus loaded every rule of rules.yml and evaluates each one healthily."""
        _, _, rules = stack
        assert {q.rule for q in rule_queries()} == {r["name"] for r in rules}
        assert [] == [(r["name"], r.get("lastError")) for r in rules if r["health"] != "ok"]

    def test_latency_exemplars_carry_trace_ids(self, stack):
        """The exemplars behind every runtime latency panel (tool, approval wait, LLM, turn)
        carry 32-hex trace ids."""
        api, at, _ = stack
        for query in panel_queries():
            if not query.exemplar or "traces_span_metrics" in query.expr:
                continue
            answer = api.get(
                "query_exemplars",
                query=substitute(query.expr, VALUES),
                start=f"{at - 120:.3f}",
                end=f"{at + 1:.3f}",
            )
            assert "success" == answer["status"], query.where
            trace_ids = [
                exemplar["labels"]["trace_id"]
                for series in answer["data"]
                for exemplar in series["exemplars"]
            ]
            assert trace_ids, query.where
            assert all(TRACE_ID.fullmatch(t) for t in trace_ids), query.where
