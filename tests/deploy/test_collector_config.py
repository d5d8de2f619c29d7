"""otel-collector.yaml, read without a Collector: pipelines reference defined components in the
usual order, components use one naming style, the health check is on, the span metrics match
the runtime's tool histogram, and every redaction pattern compiles under RE2 and mirrors a
secret shape the runtime's own redactor knows.
"""

from __future__ import annotations

import re

import pytest
import re2

from zeroclaw_obs.observability.metrics.metrics import TOOL_DURATION_BUCKETS
from zeroclaw_obs.redaction import RULES, Redactor

from .stack import ROOT, compose_services, duration_seconds, host_port, load_yaml

KINDS = ("receivers", "processors", "exporters", "connectors", "extensions")
COMPONENT_ID = re.compile(r"[a-z][a-z0-9_]*(?:/[a-z0-9_]+)?")

SECRETS = {
    "private key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
    + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "aws key id": "AKIAIOSFODNN7EXAMPLF",
    "github classic": "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "github fine-grained": "github_pat_" + "11ABCDEFG0123456789abc_" + "x" * 59,
    "gitlab": "glpat-" + "xY3kP9mQ2vR7tL5nB8wZ",
    "slack": "xoxb-" + "2938475610-4829157364-aB3dE5fG7hJ9kL1mN3pQ5rS7",
    "openai": "sk-proj-" + "9fK2mQ7xVb4LpR8sT1wZ6yN3cD5eH0jA",
    "anthropic": "sk-ant-api03-" + "Zq8Xw2Lm5Np7Rt4Vy6Bc9Df3Gh1Jk0",
    "stripe": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "google": "AIza" + "SyD3x9Kq2LmN8pR4tV6wY1zB5cF7hJ0kM2n",
    "hugging face": "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz012345",
    "npm": "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "bearer": "Authorization: Bearer 7f3Kq9Lm2Np8Rt5Vx1Zb4Dc6",
    "url credentials": "postgres://deploy:Tr0ub4dor-and-3@db.internal:5432/app",
    "card": "4111111111111111",
    "email": "jane.doe@example.com",
}
"""One fake secret per pattern, each also found by the runtime's redactor."""

BENIGN = [
    "0af7651916cd43dd8448eb211c80319c",  # trace id
    "b7ad6b7169203331",  # span id
    "550e8400-e29b-41d4-a716-446655440000",
    "da39a3ee5e6b4b0d3255bfef95601890afd80709",  # a sha1
    "2025-01-31T12:00:00.000Z",
    "execute_tool get_weather",
    "zc-receipt-v1.0af76519.3f9a",
    "1738324800123",  # epoch milliseconds
    "postgres://db.internal:5432/app",
    "the bearer of bad news",
] + [f"[REDACTED:{rule}]" for rule in RULES]


def collector() -> dict:
    return load_yaml("otel-collector.yaml")


def pipelines() -> dict[str, dict]:
    return collector()["service"]["pipelines"]


def blocked_values() -> list[str]:
    return collector()["processors"]["redaction"]["blocked_values"]


class TestPipelines:
    def test_pipelines_reference_defined_components(self):
        """Every receiver, processor and exporter a pipeline names is defined; a connector
        is an exporter of one pipeline and a receiver of another."""
        config = collector()
        defined = {kind: set(config.get(kind) or {}) for kind in KINDS}
        as_exporter, as_receiver = set(), set()
        for name, pipeline in pipelines().items():
            assert re.fullmatch(r"(traces|metrics|logs)(/[a-z0-9_]+)?", name), name
            for receiver in pipeline["receivers"]:
                assert receiver in defined["receivers"] | defined["connectors"], (name, receiver)
                as_receiver.add(receiver)
            for processor in pipeline.get("processors", []):
                assert processor in defined["processors"], (name, processor)
            for exporter in pipeline["exporters"]:
                assert exporter in defined["exporters"] | defined["connectors"], (name, exporter)
                as_exporter.add(exporter)
        assert defined["connectors"] <= as_exporter & as_receiver

    def test_every_defined_component_is_used(self):
        """No component is defined and left out of every pipeline."""
        config = collector()
        used = set(config["service"]["extensions"])
        for pipeline in pipelines().values():
            for kind in ("receivers", "processors", "exporters"):
                used.update(pipeline.get(kind, []))
        for kind in KINDS:
            assert set() == set(config.get(kind) or {}) - used, kind

    def test_memory_limiter_first_batch_last(self):
        """Every pipeline starts with memory_limiter and ends with batch."""
        for name, pipeline in pipelines().items():
            processors = pipeline["processors"]
            assert "memory_limiter" == processors[0], name
            assert "batch" == processors[-1], name

    def test_traces_are_redacted_before_any_export(self):
        """The traces pipeline that receives OTLP redacts before Jaeger and span metrics."""
        traces = pipelines()["traces"]
        assert ["otlp"] == traces["receivers"]
        assert "redaction" in traces["processors"]
        assert {"otlp/jaeger", "spanmetrics"} == set(traces["exporters"])

    def test_one_naming_style(self):
        """Component ids are lower-case `type` or `type/purpose`, in snake case."""
        config = collector()
        names = [name for kind in KINDS for name in (config.get(kind) or {})]
        names += list(pipelines())
        assert [] == [name for name in names if not COMPONENT_ID.fullmatch(name)]

    def test_health_check_enabled(self):
        """The health_check extension is defined, enabled, and published by compose."""
        config = collector()
        assert "health_check" in config["extensions"]
        assert "health_check" in config["service"]["extensions"]
        port = int(config["extensions"]["health_check"]["endpoint"].rsplit(":", 1)[1])
        published = {host_port(p)[1] for p in compose_services()["otel-collector"]["ports"]}
        assert port in published

    def test_receivers_listen_on_all_interfaces(self):
        """OTLP gRPC on 4317 and HTTP on 4318, bound to 0.0.0.0 (the collector binds to
        localhost by default, which a published container port cannot reach)."""
        protocols = collector()["receivers"]["otlp"]["protocols"]
        assert "0.0.0.0:4317" == protocols["grpc"]["endpoint"]
        assert "0.0.0.0:4318" == protocols["http"]["endpoint"]

    def test_minimum_version_pinned_and_met_by_compose(self):
        """The file names a minimum collector version that the compose image satisfies."""
        text = (ROOT / "otel-collector.yaml").read_text()
        match = re.search(r"opentelemetry-collector-contrib >= (\d+)\.(\d+)\.(\d+)", text)
        assert match is not None
        image = compose_services()["otel-collector"]["image"]
        assert image.startswith("otel/opentelemetry-collector-contrib:")
        tag = tuple(int(p) for p in image.rsplit(":", 1)[1].split("."))
        assert tag >= tuple(int(g) for g in match.groups())


class TestSpanMetrics:
    def test_buckets_are_the_runtimes_tool_buckets(self):
        """The connector's explicit buckets (in seconds) are TOOL_DURATION_BUCKETS."""
        histogram = collector()["connectors"]["spanmetrics"]["histogram"]
        assert "s" == histogram["unit"]
        buckets = [duration_seconds(b) for b in histogram["explicit"]["buckets"]]
        assert list(TOOL_DURATION_BUCKETS) == pytest.approx(buckets)

    def test_exemplars_reach_prometheus(self):
        """Span metrics carry exemplars and the Prometheus exporter serves OpenMetrics."""
        config = collector()
        assert config["connectors"]["spanmetrics"]["exemplars"]["enabled"] is True
        assert config["exporters"]["prometheus"]["enable_open_metrics"] is True

    def test_dimensions_are_span_attributes_of_tool_spans(self):
        """The extra dimensions are GenAI / zeroclaw attributes the runtime sets on spans."""
        source = (ROOT / "zeroclaw_obs" / "observability" / "traces" / "attributes.py").read_text()
        for dimension in collector()["connectors"]["spanmetrics"]["dimensions"]:
            assert f'"{dimension["name"]}"' in source, dimension["name"]


class TestRedactionProcessor:
    def test_blocks_values_keeps_keys(self):
        """All keys pass (allow_all_keys), values are scanned, and the summary says how many."""
        redaction = collector()["processors"]["redaction"]
        assert redaction["allow_all_keys"] is True
        assert redaction["summary"] in {"debug", "info", "silent"}
        assert blocked_values()

    @pytest.mark.parametrize("pattern", blocked_values())
    def test_pattern_compiles_under_re2(self, pattern):
        """Each blocked value pattern is valid RE2 (the Go regexp syntax) with no `$`, which
        the collector would read as an environment variable."""
        re2.compile(pattern)
        assert "$" not in pattern

    def test_every_pattern_mirrors_a_runtime_rule(self):
        """Each pattern matches at least one sample secret, every sample is matched, and the
        runtime's redactor redacts every sample too: defense in depth, not a second policy."""
        compiled = [re2.compile(p) for p in blocked_values()]
        unused = [p.pattern for p in compiled if not any(p.search(s) for s in SECRETS.values())]
        assert [] == unused
        missed = [kind for kind, s in SECRETS.items() if not any(p.search(s) for p in compiled)]
        assert [] == missed
        redactor = Redactor()
        assert [] == [kind for kind, s in SECRETS.items() if redactor.redact_text(s) == s]

    def test_runtime_markers_and_ids_are_left_alone(self):
        """No pattern matches the runtime's `[REDACTED:<rule>]` markers, ids or timestamps, so
        already-redacted telemetry passes unchanged."""
        compiled = [re2.compile(p) for p in blocked_values()]
        assert [] == [(p.pattern, s) for p in compiled for s in BENIGN if p.search(s)]
