"""The Grafana dashboards and their provisioning: structure, data sources, and that every
metric and label a panel names is one the runtime (or, in marked panels, the collector's
spanmetrics connector) really exposes.

The runtime's names are not copied from DESIGN §3: they come from a real run. A scenario that
touches every metric runs on a fresh registry, and the exposition it renders is the list.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from prometheus_client.parser import text_string_to_metric_families as text_families

from zeroclaw_obs.observability.chain import TelemetryChain
from zeroclaw_obs.observability.events import EventIds
from zeroclaw_obs.observability.health import HealthCounter, Signal, TelemetryHealth
from zeroclaw_obs.observability.metrics.exposition import render_metrics
from zeroclaw_obs.observability.metrics.metrics import MetricsObserver

from ..builders import DEPLOY, WEATHER, call
from .stack import (
    DASHBOARDS,
    GRAFANA_BUILTINS,
    PROVISIONING,
    TARGET_LABELS,
    compose_services,
    dashboards,
    host_path,
    label_names,
    load_yaml,
    metric_names,
    panel_queries,
    panels,
    parse_label_values,
    rule_queries,
    spanmetrics_names,
    variable_queries,
    variables_used,
)

SPANMETRICS_PANELS = {("zeroclaw-tool-latency", "Tool span p95 from the collector (spanmetrics)")}
"""The only panels allowed to use the collector's span metrics instead of the runtime's."""

PING = {
    "name": "ping",
    "parameters": {"type": "object", "properties": {"host": {"type": "string"}}},
    "responses": [{"default": {"output": "pong"}}],
}
TOOLS = [WEATHER, DEPLOY, PING]


EVERY_METRIC_TURN = {
    "user": "go",
    "config": {
        "receipts": {"enabled": True},
        "dedup_exempt_tools": ["ping"],
        "approval": {"auto_approve": ["get_weather", "ping"], "answers": ["yes", "no"]},
    },
    "tools": TOOLS,
    "responses": [
        {
            "tool_calls": [
                call("get_weather", "c1", city="Paris"),
                call("get_weather", "c2", city="Leaky"),
                call("get_weather", "c3", city="Atlantis"),
                call("made_up_tool", "c4"),
                call("deploy", "c5", target="prod"),
                call("deploy", "c6", target="staging"),
            ],
            "usage": {"input_tokens": 100, "output_tokens": 20},
        },
        *({"tool_calls": [call("ping", f"p{i}", host="db")]} for i in range(3)),
        {"text": "done", "usage": {"input_tokens": 150, "output_tokens": 5}},
    ],
}
"""Success, error, an invented tool, approval yes and no, a secret, receipts, and three
identical calls in a row for the loop detector."""


class FixedSpanIds:
    """Every event belongs to one trace, so exemplars carry a known trace id."""

    TRACE_ID = "0af7651916cd43dd8448eb211c80319c"

    def record(self, event: Any) -> EventIds:
        ids = (self.TRACE_ID, "b7ad6b7169203331")
        return EventIds(ids, ids)


@pytest.fixture
async def exposition(run_scenario) -> dict[str, Any]:
    """What the runtime exposes after a turn that touches every metric: sample names with
    their label names, and the OpenMetrics text (with exemplars)."""
    registry = CollectorRegistry()
    health = TelemetryHealth()
    health.increment(HealthCounter.DROPPED, Signal.TRACES)
    observer = TelemetryChain(FixedSpanIds(), [MetricsObserver(registry, health=health)])
    await run_scenario(EVERY_METRIC_TURN, observer=observer)
    text = render_metrics(registry, openmetrics=False).decode()
    labels: dict[str, set[str]] = {}
    for family in text_families(text):
        for sample in family.samples:
            labels.setdefault(sample.name, set()).update(sample.labels)
    return {"labels": labels, "openmetrics": render_metrics(registry, openmetrics=True).decode()}


def runtime_metrics_of(names: set[str], exposed: dict[str, set[str]]) -> set[str]:
    return {n for n in names if n in exposed}


class TestDashboardFiles:
    def test_three_dashboards_with_unique_uids(self):
        """tool-latency, safety and turns exist, are JSON, and have distinct fixed uids."""
        found = dashboards()
        assert {"tool-latency.json", "safety.json", "turns.json"} == set(found)
        uids = [d["uid"] for d in found.values()]
        assert len(uids) == len(set(uids))
        assert all(re.fullmatch(r"[a-z0-9-]{1,40}", uid) for uid in uids)

    def test_every_panel_titled_described_and_uniquely_numbered(self):
        """Every panel has a title, a description and an id unique within its dashboard."""
        for name, dashboard in dashboards().items():
            ids = [panel["id"] for panel in panels(dashboard)]
            assert len(ids) == len(set(ids)), name
            for panel in panels(dashboard):
                assert panel.get("title", "").strip(), (name, panel["id"])
                assert panel.get("description", "").strip(), (name, panel["title"])

    def test_panel_titles_unique_and_refids_unique(self):
        """Panel titles are unique per dashboard and a panel's targets have distinct refIds."""
        for name, dashboard in dashboards().items():
            titles = [panel["title"] for panel in panels(dashboard)]
            assert len(titles) == len(set(titles)), name
            for panel in panels(dashboard):
                refs = [target["refId"] for target in panel.get("targets", [])]
                assert len(refs) == len(set(refs)), (name, panel["title"])

    def test_schema_and_layout(self):
        """Schema version 39 or later, and every panel fits the 24-column grid."""
        for name, dashboard in dashboards().items():
            assert dashboard["schemaVersion"] >= 39, name
            for panel in panels(dashboard):
                grid = panel["gridPos"]
                assert 0 <= grid["x"] and grid["x"] + grid["w"] <= 24, (name, panel["title"])

    def test_tool_and_agent_variables_everywhere(self):
        """Every dashboard has multi-value `agent` and `tool` variables with All = `.*`, and
        the agent variable says it is a target label."""
        for name, dashboard in dashboards().items():
            variables = {v["name"]: v for v in dashboard["templating"]["list"]}
            assert {"agent", "tool"} <= set(variables), name
            for variable in (variables["agent"], variables["tool"]):
                assert variable["multi"] and variable["includeAll"], (name, variable["name"])
                assert ".*" == variable["allValue"]
                assert variable["description"].strip()
            assert "target label" in variables["agent"]["description"]
            assert 'agent=~"$agent"' in variables["tool"]["query"]["query"]

    def test_every_variable_used_is_defined(self):
        """Panels only use the dashboard's own variables and Grafana's built-in intervals."""
        for dashboard in dashboards().values():
            defined = {v["name"] for v in dashboard["templating"]["list"]} | GRAFANA_BUILTINS
            for panel in panels(dashboard):
                for target in panel.get("targets", []):
                    assert set() == variables_used(target["expr"]) - defined, panel["title"]

    def test_latency_panels_show_exemplars(self):
        """Every quantile target asks for exemplars, so a latency spike opens its trace."""
        quantiles = [q for q in panel_queries() if "histogram_quantile" in q.expr]
        assert quantiles
        table_targets = {
            f"{d['uid']} / {p['title']} / {t['refId']}"
            for d in dashboards().values()
            for p in panels(d)
            if p["type"] == "table"
            for t in p["targets"]
        }
        assert [] == [q.where for q in quantiles if not q.exemplar and q.where not in table_targets]

    def test_the_slowest_tools_table_is_an_instant_topk(self):
        """The slowest-tools table ranks tools by p95 with an instant topk query."""
        tool_latency = dashboards()["tool-latency.json"]
        tables = [p for p in panels(tool_latency) if p["type"] == "table"]
        assert 1 == len(tables)
        first = tables[0]["targets"][0]
        assert first["instant"] and first["expr"].startswith("topk(")
        assert "histogram_quantile(0.95" in first["expr"]

    def test_approval_wait_is_apart_from_tool_latency(self):
        """No expression mixes approval wait into the tool duration histogram."""
        for query in panel_queries() + rule_queries():
            names = metric_names(query.expr)
            tool = any(n.startswith("zeroclaw_tool_duration_seconds") for n in names)
            wait = any(n.startswith("zeroclaw_approval_wait_seconds") for n in names)
            assert not (tool and wait), query.where
        assert any("zeroclaw_approval_wait_seconds" in q.expr for q in panel_queries())


class TestMetricNames:
    def test_the_run_exposes_every_design_metric(self, exposition):
        """The reference run really produced samples of every metric the runtime has."""
        exposed = exposition["labels"]
        for base in (
            "zeroclaw_tool_calls_total", "zeroclaw_tool_duration_seconds_bucket",
            "zeroclaw_llm_requests_total", "zeroclaw_llm_duration_seconds_bucket",
            "zeroclaw_tokens_total", "zeroclaw_turns_total",
            "zeroclaw_turn_duration_seconds_bucket", "zeroclaw_approvals_total",
            "zeroclaw_approval_wait_seconds_bucket", "zeroclaw_redactions_total",
            "zeroclaw_receipts_total", "zeroclaw_loop_detections_total",
            "zeroclaw_telemetry_dropped_total",
        ):  # fmt: skip
            assert base in exposed, base

    def test_panels_and_rules_name_exposed_metrics(self, exposition):
        """Every metric in a panel, alert or variable query is one the runtime exposes; the
        collector's span metrics appear only in the marked panels."""
        exposed = exposition["labels"]
        span_names, _ = spanmetrics_names(load_yaml("otel-collector.yaml"))
        using_spans = set()
        for query in panel_queries() + rule_queries():
            names = metric_names(query.expr)
            assert names, query.where
            unknown = names - set(exposed) - span_names
            assert set() == unknown, query.where
            if names & span_names:
                using_spans.add(query.panel)
                assert set() == names - span_names, f"{query.where} mixes sources"
        assert SPANMETRICS_PANELS == using_spans
        for uid, name, text in variable_queries():
            selector, _ = parse_label_values(text)
            assert set() == metric_names(selector) - set(exposed), (uid, name)

    def test_labels_are_those_of_the_metrics(self, exposition):
        """Every label an expression uses belongs to its metrics, or is a target label."""
        exposed = exposition["labels"]
        _, span_labels = spanmetrics_names(load_yaml("otel-collector.yaml"))
        for query in panel_queries() + rule_queries():
            names = metric_names(query.expr)
            allowed = set(TARGET_LABELS)
            for name in names:
                allowed |= exposed.get(name, span_labels)
            assert set() == label_names(query.expr) - allowed, query.where
        for uid, name, text in variable_queries():
            selector, label = parse_label_values(text)
            allowed = set(TARGET_LABELS).union(*(exposed[n] for n in metric_names(selector)))
            assert label in allowed, (uid, name)

    def test_legends_name_grouped_labels(self):
        """A legend `{{label}}` names a label its expression keeps (grouped by)."""
        for dashboard in dashboards().values():
            for panel in panels(dashboard):
                for target in panel.get("targets", []):
                    for label in re.findall(r"\{\{\s*(\w+)\s*\}\}", target.get("legendFormat", "")):
                        assert label in label_names(target["expr"]), panel["title"]


class TestProvisioning:
    def datasources(self) -> dict[str, dict[str, Any]]:
        config = load_yaml("dashboards/provisioning/datasources/datasources.yaml")
        return {source["uid"]: source for source in config["datasources"]}

    def test_prometheus_and_jaeger_with_fixed_uids(self):
        """One Prometheus (the default) and one Jaeger data source, each with a fixed uid."""
        sources = self.datasources()
        assert {"prometheus", "jaeger"} == {s["type"] for s in sources.values()}
        default = [s for s in sources.values() if s.get("isDefault")]
        assert ["prometheus"] == [s["type"] for s in default]

    def test_dashboards_use_provisioned_datasources(self):
        """Every data source a dashboard, panel, target or variable names is provisioned."""
        sources = self.datasources()
        for name, dashboard in dashboards().items():
            refs = [v["datasource"] for v in dashboard["templating"]["list"]]
            for panel in panels(dashboard):
                refs.append(panel["datasource"])
                refs.extend(target["datasource"] for target in panel.get("targets", []))
            for ref in refs:
                assert ref["uid"] in sources, (name, ref)
                assert sources[ref["uid"]]["type"] == ref["type"], (name, ref)

    def test_exemplars_link_to_jaeger_by_trace_id(self, exposition):
        """The Prometheus data source opens an exemplar's `trace_id` in the Jaeger data
        source, and `trace_id` is the label the runtime's exemplars carry."""
        sources = self.datasources()
        prometheus = next(s for s in sources.values() if s["type"] == "prometheus")
        destinations = prometheus["jsonData"]["exemplarTraceIdDestinations"]
        assert 1 == len(destinations)
        assert "jaeger" == sources[destinations[0]["datasourceUid"]]["type"]
        exemplar_keys = {
            key
            for family in text_string_to_metric_families(exposition["openmetrics"])
            for sample in family.samples
            if sample.exemplar is not None
            for key in sample.exemplar.labels
        }
        assert destinations[0]["name"] in exemplar_keys
        assert FixedSpanIds.TRACE_ID in exposition["openmetrics"]

    def test_rate_interval_follows_the_scrape_interval(self):
        """The data source's `timeInterval` is prometheus.yml's scrape interval, which
        `$__rate_interval` is computed from."""
        prometheus = next(s for s in self.datasources().values() if s["type"] == "prometheus")
        scrape = load_yaml("prometheus.yml")["global"]["scrape_interval"]
        assert scrape == prometheus["jsonData"]["timeInterval"]

    def test_datasource_urls_reach_compose_services(self):
        """Each data source URL names a compose service on the port that service publishes."""
        services = compose_services()
        for source in self.datasources().values():
            match = re.fullmatch(r"http://([\w-]+):(\d+)/?", source["url"])
            assert match is not None, source["url"]
            host, port = match.group(1), match.group(2)
            assert host in services
            assert any(str(p).endswith(f":{port}") for p in services[host]["ports"])

    def test_dashboard_provider_loads_every_dashboard(self):
        """The file provider's path is a Grafana mount of dashboards/, which holds every JSON
        dashboard; the provisioning directory is mounted where Grafana reads it."""
        providers = load_yaml("dashboards/provisioning/dashboards/dashboards.yaml")["providers"]
        assert 1 == len(providers) and "file" == providers[0]["type"]
        grafana = compose_services()["grafana"]
        assert DASHBOARDS.resolve() == host_path(grafana, providers[0]["options"]["path"])
        assert PROVISIONING.resolve() == host_path(grafana, "/etc/grafana/provisioning")
        for path in DASHBOARDS.glob("*.json"):
            json.loads(path.read_text())
