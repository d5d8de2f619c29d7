"""Tests for `observability/metrics/metrics.py`: counters, histograms, exemplars, exposition."""

from __future__ import annotations

import dataclasses
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from zeroclaw_obs.observability.chain import SpanStep
from zeroclaw_obs.observability.events import (
    NO_IDS,
    EventIds,
    ToolCall,
    ToolOutcome,
)
from zeroclaw_obs.observability.health import TelemetryHealth
from zeroclaw_obs.observability.metrics.exposition import render_metrics, serve_metrics
from zeroclaw_obs.observability.metrics.metrics import LABEL_LIMIT, HealthSource, MetricsObserver
from zeroclaw_obs.observability.observer import MultiObserver
from zeroclaw_obs.redaction import Redactor

from ...builders import (
    DEPLOY,
    ECHO,
    SECRET,
    WEATHER,
    HashSpanIds,
    PlayedProvider,
    answer,
    build,
    call,
    chained,
    http,
    llm_response,
    mixed_turn,
    tool_call_event,
)
from ...conftest import CountingRedactor


def echo_rounds(count: int) -> dict[str, Any]:
    """`count` identical echo calls, one per response, then a final answer."""
    return {
        "user": "go",
        "config": {"approval": {"autonomy": "full"}},
        "tools": [ECHO],
        "responses": [
            *({"tool_calls": [call("echo", f"c{i}", q="x")]} for i in range(count)),
            {"text": "done"},
        ],
    }


class CountingHealth:
    """A health source whose drop counts the test changes between scrapes."""

    def __init__(self) -> None:
        self.dropped: dict[str, int] = {}

    def snapshot(self) -> dict[str, Any]:
        return {"dropped": dict(self.dropped), "export_failures": 0, "observer_errors": 0}


class BrokenHealth:
    def snapshot(self) -> dict[str, Any]:
        raise RuntimeError("exporter thread died")


class BrokenSpanIds:
    def record(self, event: Any) -> EventIds:
        raise RuntimeError("tracer broke")


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


def value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


def openmetrics_exemplars(registry: CollectorRegistry, sample_name: str) -> list[dict[str, str]]:
    """The exemplar labels of every sample called `sample_name` in the OpenMetrics exposition."""
    text = render_metrics(registry, openmetrics=True).decode()
    return [
        dict(sample.exemplar.labels)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == sample_name and sample.exemplar is not None
    ]


class TestToolMetrics:
    async def test_calls_and_durations_by_outcome(self, run_scenario, registry):
        """Each result slot counts once under its tool and outcome, with one duration."""
        await run_scenario(mixed_turn(), observer=MetricsObserver(registry))
        expected = {
            ("get_weather", "success"): 1.0,
            ("get_weather", "error"): 1.0,
            ("unknown", "unknown"): 1.0,
            ("deploy", "denied"): 1.0,
        }
        calls = {
            key: value(registry, "zeroclaw_tool_calls_total", tool=key[0], outcome=key[1])
            for key in expected
        }
        durations = {
            key: value(
                registry, "zeroclaw_tool_duration_seconds_count", tool=key[0], outcome=key[1]
            )
            for key in expected
        }
        assert expected == calls
        assert expected == durations

    async def test_deferred_counts_are_what_a_reader_sees(self, run_scenario, registry):
        """Deferred, the turn only queues its events; every read of the registry (a scrape,
        an exposition) first has them applied, so it counts what the synchronous observer
        counts, exemplars included; after `shutdown` too."""
        direct = CollectorRegistry()
        spans = HashSpanIds()
        await run_scenario(mixed_turn(), observer=chained(spans, MetricsObserver(direct)))
        deferred = MetricsObserver(registry, deferred=True)
        await run_scenario(mixed_turn(), observer=chained(HashSpanIds(), deferred))
        names = ("zeroclaw_tool_calls_total", "zeroclaw_tool_duration_seconds_count")

        def samples(reg: CollectorRegistry) -> dict[tuple[str, str, str], float]:
            return {
                (s.name, s.labels.get("tool", ""), s.labels.get("outcome", "")): s.value
                for family in reg.collect()
                for s in family.samples
                if s.name in names
            }

        assert samples(direct) == samples(registry) != {}
        assert openmetrics_exemplars(registry, "zeroclaw_tool_calls_total")
        assert deferred.shutdown(5)
        assert samples(direct) == samples(registry)

    def test_a_full_deferred_queue_drops_and_counts(self, registry):
        """Events beyond the queue are dropped and counted as `signal="metrics"`."""
        health = TelemetryHealth()
        deferred = MetricsObserver(registry, deferred=True, health=health)
        assert deferred.shutdown(5)  # closed: nothing more is taken
        deferred.on_event(llm_response())
        assert 1 == health.snapshot().dropped["metrics"]

    async def test_repeated_labels_add_up_on_one_series(self, run_scenario, registry):
        """Calls with the same tool and outcome add up on one series, turn after turn."""
        observer = MetricsObserver(registry)
        for _ in range(2):
            await run_scenario(echo_rounds(3), observer=observer)
        labels = {"tool": "echo", "outcome": "success"}
        assert (6.0, 6.0, 2.0) == (
            value(registry, "zeroclaw_tool_calls_total", **labels),
            value(registry, "zeroclaw_tool_duration_seconds_count", **labels),
            value(registry, "zeroclaw_turns_total", outcome="final"),
        )

    async def test_invented_tool_name_never_becomes_a_label(self, run_scenario, registry):
        """A name the model invented is labelled `unknown`, never by the name itself."""
        await run_scenario(mixed_turn(), observer=MetricsObserver(registry))
        text = render_metrics(registry, openmetrics=False).decode()
        assert "made_up_tool" not in text

    async def test_known_tools_predicate_bounds_the_label(self, run_scenario, registry):
        """A registered name the `known_tools` predicate rejects is labelled `unknown` too."""
        observer = MetricsObserver(registry, known_tools=lambda name: name == "deploy")
        await run_scenario(mixed_turn(), observer=observer)
        assert 1.0 == value(registry, "zeroclaw_tool_calls_total", tool="unknown", outcome="error")
        assert 1.0 == value(
            registry, "zeroclaw_tool_calls_total", tool="unknown", outcome="success"
        )
        assert None is value(
            registry, "zeroclaw_tool_calls_total", tool="get_weather", outcome="success"
        )

    async def test_receipts_are_counted_per_tool(self, run_scenario, registry):
        """Only successful executions with receipts on count in `zeroclaw_receipts_total`."""
        data = mixed_turn(receipts={"enabled": True})
        await run_scenario(data, observer=MetricsObserver(registry))
        assert 1.0 == value(registry, "zeroclaw_receipts_total", tool="get_weather")
        assert None is value(registry, "zeroclaw_receipts_total", tool="deploy")

    async def test_redactions_in_tool_results_are_counted_by_rule(self, run_scenario, registry):
        """A secret in a tool result counts under its rule id with surface `tool_result`."""
        data = {
            "user": "go",
            "config": {"approval": {"auto_approve": ["get_weather"]}},
            "tools": [WEATHER],
            "responses": [
                {"tool_calls": [call("get_weather", "c1", city="Leaky")]},
                {"text": "done"},
            ],
        }
        await run_scenario(data, observer=MetricsObserver(registry))
        assert 1.0 == value(
            registry, "zeroclaw_redactions_total", rule="github_token", surface="tool_result"
        )

    def test_count_redactions_for_another_surface(self, registry):
        """Other surfaces add their redaction reports under their own surface name."""
        observer = MetricsObserver(registry)
        observer.count_redactions({"email": 2, "bearer": 0}, "log")
        assert 2.0 == value(registry, "zeroclaw_redactions_total", rule="email", surface="log")
        assert None is value(registry, "zeroclaw_redactions_total", rule="bearer", surface="log")


class TestLlmMetrics:
    async def test_requests_and_tokens(self, run_scenario, registry):
        """Provider calls count by success; tokens add up by direction."""
        await run_scenario(mixed_turn(), observer=MetricsObserver(registry))
        labels = {"provider": "scripted", "model": "scripted-model"}
        assert 2.0 == value(registry, "zeroclaw_llm_requests_total", success="true", **labels)
        assert 2.0 == value(registry, "zeroclaw_llm_duration_seconds_count", **labels)
        assert 250.0 == value(registry, "zeroclaw_tokens_total", direction="input", **labels)
        assert 25.0 == value(registry, "zeroclaw_tokens_total", direction="output", **labels)

    async def test_model_names_are_cut(self, run_scenario, registry):
        """A model name longer than `LABEL_LIMIT` is cut to it."""
        data = {**echo_rounds(0), "provider": {"model": "m" * 500}}
        await run_scenario(data, observer=MetricsObserver(registry))
        labels = {"provider": "scripted", "model": "m" * LABEL_LIMIT, "success": "true"}
        assert 1.0 == value(registry, "zeroclaw_llm_requests_total", **labels)

    async def test_the_model_label_is_the_requested_model(self, registry):
        """A response that reports another model still counts under the requested one."""
        provider = PlayedProvider(answer(model="gpt-test-2025-01-01-preview"))
        await build(provider, observer=MetricsObserver(registry)).run()
        labels = {"provider": "openai", "model": "gpt-test", "success": "true"}
        assert 1.0 == value(registry, "zeroclaw_llm_requests_total", **labels)
        assert "2025" not in render_metrics(registry, openmetrics=False).decode()

    async def test_retries_count_as_one_request(self, registry):
        """A call that succeeded after a retry is one request, `success="true"`."""
        provider = PlayedProvider(http(503), answer())
        await build(provider, observer=MetricsObserver(registry)).run()
        labels = {"provider": "openai", "model": "gpt-test", "success": "true"}
        assert 1.0 == value(registry, "zeroclaw_llm_requests_total", **labels)

    def test_failed_request(self, registry):
        """A failed provider call counts with `success="false"`."""
        observer = MetricsObserver(registry)
        observer.on_event(llm_response(success=False, error="ProviderError"))
        labels = {"provider": "openai", "model": "gpt", "success": "false"}
        assert 1.0 == value(registry, "zeroclaw_llm_requests_total", **labels)


class TestLabelRedaction:
    """Label values are payloads: with a redactor they are redacted, then cut (issue 10)."""

    def test_model_and_provider_labels_are_redacted(self, registry):
        """A token in a model or provider name never reaches the exposition."""
        observer = MetricsObserver(registry, redactor=Redactor())
        observer.on_event(llm_response(provider=f"p {SECRET}", model=f"m/{SECRET}"))
        exposition = render_metrics(registry, openmetrics=True).decode()
        assert SECRET not in exposition
        assert 'model="m/[REDACTED:github_token]"' in exposition

    def test_a_label_is_redacted_before_it_is_cut(self, registry):
        """A token across the `LABEL_LIMIT` cut leaves no piece: redaction sees it whole."""
        model = "m" * (LABEL_LIMIT - 10) + " " + SECRET
        observer = MetricsObserver(registry, redactor=Redactor())
        observer.on_event(llm_response(model=model))
        exposition = render_metrics(registry, openmetrics=True).decode()
        assert SECRET[:10] not in exposition

    def test_each_label_set_is_redacted_once(self, registry):
        """The redactor runs when a child is created, not for every event."""
        redactor = CountingRedactor()
        observer = MetricsObserver(registry, redactor=redactor)
        observer.on_event(llm_response())
        first = redactor.calls
        for _ in range(5):
            observer.on_event(llm_response())
        assert first == redactor.calls

    def test_tool_label_is_the_shown_name(self, registry):
        """`tool_label` gives the redacted, cut name of a registry tool."""
        observer = MetricsObserver(registry, redactor=Redactor())
        assert "t.[REDACTED:github_token]" == observer.tool_label(f"t.{SECRET}")

    @pytest.mark.parametrize("redactor", [None, Redactor()])
    def test_a_lone_surrogate_in_a_label_does_not_break_the_exposition(self, registry, redactor):
        """A model name holding a lone surrogate renders as its `\\udXXX` escape."""
        observer = MetricsObserver(registry, redactor=redactor)
        observer.on_event(llm_response(model="m\ud800x"))
        for openmetrics in (False, True):
            exposition = render_metrics(registry, openmetrics=openmetrics).decode()
            assert "m\\\\ud800x" in exposition


class TestTurnMetrics:
    async def test_turns_by_outcome(self, run_scenario, registry):
        """Turns count by outcome; each adds one turn duration."""
        observer = MetricsObserver(registry)
        await run_scenario(echo_rounds(0), observer=observer)
        await run_scenario(echo_rounds(5), observer=observer)
        assert 1.0 == value(registry, "zeroclaw_turns_total", outcome="final")
        assert 1.0 == value(registry, "zeroclaw_turns_total", outcome="aborted")
        assert 2.0 == value(registry, "zeroclaw_turn_duration_seconds_count")


class TestApprovalMetrics:
    async def test_decisions_by_surface(self, run_scenario, registry):
        """Each decision counts by tool, decision and surface, with its wait observed."""
        data = {
            "user": "go",
            "config": {"approval": {"answers": ["yes", "no"]}},
            "tools": [DEPLOY],
            "responses": [
                {
                    "tool_calls": [
                        call("deploy", "c1", target="a"),
                        call("deploy", "c2", target="b"),
                    ]
                },
                {"text": "done"},
            ],
        }
        await run_scenario(data, observer=MetricsObserver(registry))
        labels = {"tool": "deploy", "surface": "scenario"}
        assert 1.0 == value(registry, "zeroclaw_approvals_total", decision="yes", **labels)
        assert 1.0 == value(registry, "zeroclaw_approvals_total", decision="no", **labels)
        assert 2.0 == value(registry, "zeroclaw_approval_wait_seconds_count")

    async def test_runtime_denial_surface(self, run_scenario, registry):
        """With no answer and no terminal the runtime denies, on surface `runtime`."""
        data = {**mixed_turn(), "config": {"approval": {"auto_approve": ["get_weather"]}}}
        await run_scenario(data, observer=MetricsObserver(registry))
        labels = {"tool": "deploy", "decision": "no", "surface": "runtime"}
        assert 1.0 == value(registry, "zeroclaw_approvals_total", **labels)


class TestLoopDetectionMetrics:
    async def test_detections_by_kind_and_severity(self, run_scenario, registry):
        """Four identical calls fire a repeat warning and then a repeat block."""
        await run_scenario(echo_rounds(4), observer=MetricsObserver(registry))
        kinds = {"kind": "repeat"}
        assert 1.0 == value(registry, "zeroclaw_loop_detections_total", severity="warning", **kinds)
        assert 1.0 == value(registry, "zeroclaw_loop_detections_total", severity="block", **kinds)


class TestExemplars:
    async def test_tool_metrics_carry_the_tool_span(self, run_scenario, registry):
        """The tool histogram and counter carry the trace id and span id of the tool span."""
        spans = HashSpanIds()
        outcome, _ = await run_scenario(
            mixed_turn(), observer=chained(spans, MetricsObserver(registry))
        )
        trace_id = spans.trace_id(outcome.turn_id)
        bucket = openmetrics_exemplars(registry, "zeroclaw_tool_duration_seconds_bucket")
        counter = openmetrics_exemplars(registry, "zeroclaw_tool_calls_total")
        expected_spans = {spans.span_id(cid) for cid in ("c1", "c2", "c3", "c4")}
        assert {trace_id} == {e["trace_id"] for e in bucket + counter}
        assert expected_spans == {e["span_id"] for e in counter}

    async def test_llm_and_turn_histograms_carry_the_root_span(self, run_scenario, registry):
        """The LLM and turn histograms carry the ids of the turn's root span."""
        spans = HashSpanIds()
        outcome, _ = await run_scenario(
            echo_rounds(1), observer=chained(spans, MetricsObserver(registry))
        )
        root = {"trace_id": spans.trace_id(outcome.turn_id), "span_id": spans.span_id(None)}
        assert [root] == openmetrics_exemplars(registry, "zeroclaw_turn_duration_seconds_bucket")
        assert [root] == openmetrics_exemplars(registry, "zeroclaw_llm_duration_seconds_bucket")[:1]

    async def test_text_format_has_no_exemplars(self, run_scenario, registry):
        """The classic text format cannot carry exemplars, so it has none."""
        await run_scenario(mixed_turn(), observer=chained(HashSpanIds(), MetricsObserver(registry)))
        assert "trace_id" not in render_metrics(registry, openmetrics=False).decode()

    async def test_without_span_ids_there_are_no_exemplars(self, run_scenario, registry):
        """With no tracing side, metrics are recorded without exemplars."""
        await run_scenario(mixed_turn(), observer=MetricsObserver(registry))
        assert [] == openmetrics_exemplars(registry, "zeroclaw_tool_calls_total")

    async def test_a_broken_tracer_costs_only_the_exemplar(self, run_scenario, registry):
        """A span step that raises leaves the metrics recorded, without exemplars."""
        metrics = MetricsObserver(registry)
        await run_scenario(mixed_turn(), observer=chained(BrokenSpanIds(), metrics))
        assert 1.0 == value(
            registry, "zeroclaw_tool_calls_total", tool="get_weather", outcome="success"
        )
        assert 0 == metrics.errors


def tool_call(
    tool: str, outcome: ToolOutcome, seconds: float, receipt: str | None = None
) -> ToolCall:
    """A `ToolCall` event with the fields metrics read."""
    return tool_call_event(outcome, tool=tool, duration_s=seconds, receipt=receipt)


def exposition_without_times(registry: CollectorRegistry) -> list[str]:
    """The OpenMetrics exposition, exemplars included, without the timestamps (each
    exemplar's and the `_created` samples), which tell apart only when each was made."""
    lines = render_metrics(registry, openmetrics=True).decode().splitlines()
    return [
        line.rsplit(" ", 1)[0] if " # {" in line else line
        for line in lines
        if "_created{" not in line and "_created " not in line
    ]


CALLS = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        st.sampled_from([ToolOutcome.SUCCESS, ToolOutcome.ERROR]),
        st.sampled_from([0.001, 0.01, 0.3, 0.4, 99.0, 1e9, float("nan"), float("inf")]),
        st.one_of(st.none(), st.integers(0, 999)),
        st.one_of(st.none(), st.just("zc-receipt")),
    ),
    max_size=40,
)
"""Tool calls: two tools, two outcomes, durations on, between and past the bounds (NaN too),
each with a span id or none, with a receipt or none."""


class TestDeferredExemplars:
    @settings(max_examples=100, deadline=None)
    @given(CALLS)
    def test_a_batch_exposes_what_one_call_at_a_time_exposes(self, calls):
        """Deferred, the calls of a batch set only the exemplars no later call replaces: the
        exposition (counts, sums, buckets, and the exemplar on each series and bucket) is
        the one recording every call's exemplar gives, series in the same order."""
        direct, batched = CollectorRegistry(), CollectorRegistry()
        one_by_one = MetricsObserver(direct)
        deferred = MetricsObserver(batched, deferred=True)
        for tool, outcome, seconds, span, receipt in calls:
            ids = NO_IDS if span is None else EventIds(span=(f"{span:032x}", f"{span:016x}"))
            event = tool_call(tool, outcome, seconds, receipt)
            one_by_one.record(event, ids)
            deferred.record(event, ids)
        assert deferred.force_flush(5)
        assert exposition_without_times(direct) == exposition_without_times(batched)
        assert deferred.shutdown(5)

    def test_the_latest_exemplar_of_each_bucket_is_kept(self, registry):
        """Three calls in one bucket and one in another, then one without ids: the counter
        shows the third call's exemplar, each bucket its own latest."""
        deferred = MetricsObserver(registry, deferred=True)
        for n, seconds in enumerate([0.3, 0.3, 0.3, 99.0]):
            ids = EventIds(span=("1" * 32, f"{n + 1:016x}"))
            deferred.record(tool_call("a", ToolOutcome.SUCCESS, seconds), ids)
        deferred.record(tool_call("a", ToolOutcome.SUCCESS, 0.3), NO_IDS)
        assert deferred.force_flush(5)
        bucket = openmetrics_exemplars(registry, "zeroclaw_tool_duration_seconds_bucket")
        counter = openmetrics_exemplars(registry, "zeroclaw_tool_calls_total")
        assert ["0000000000000003", "0000000000000004"] == [e["span_id"] for e in bucket]
        assert ["0000000000000004"] == [e["span_id"] for e in counter]
        assert deferred.shutdown(5)


class TestProtocols:
    def test_protocols(self):
        """The test doubles satisfy the `SpanStep` and `HealthSource` protocols."""
        assert isinstance(HashSpanIds(), SpanStep)
        assert isinstance(CountingHealth(), HealthSource)


class TestDroppedTelemetry:
    def test_reads_the_health_source_at_scrape_time(self, registry):
        """Drops counted after the observer was built appear at the next scrape."""
        health = CountingHealth()
        MetricsObserver(registry, health=health)
        assert None is value(registry, "zeroclaw_telemetry_dropped_total", signal="spans")
        health.dropped["spans"] = 3
        health.dropped["logs"] = 1
        assert 3.0 == value(registry, "zeroclaw_telemetry_dropped_total", signal="spans")
        assert 1.0 == value(registry, "zeroclaw_telemetry_dropped_total", signal="logs")

    def test_snapshot_with_a_dropped_attribute(self, registry):
        """A snapshot object with a `dropped` attribute is read like a mapping is."""

        @dataclasses.dataclass(frozen=True)
        class Snapshot:
            dropped: dict[str, int]

        class AttributeHealth:
            def snapshot(self) -> Snapshot:
                return Snapshot(dropped={"metrics": 2})

        MetricsObserver(registry, health=AttributeHealth())
        assert 2.0 == value(registry, "zeroclaw_telemetry_dropped_total", signal="metrics")

    def test_with_telemetry_health(self, registry):
        """Drops counted in the runtime's `TelemetryHealth` appear under their signal."""
        health_module = pytest.importorskip("zeroclaw_obs.observability.health")
        health = health_module.TelemetryHealth()
        MetricsObserver(registry, health=health)
        health.increment(health_module.HealthCounter.DROPPED, health_module.Signal.TRACES, 4)
        assert 4.0 == value(registry, "zeroclaw_telemetry_dropped_total", signal="traces")

    def test_a_broken_health_source_does_not_break_the_scrape(self, registry):
        """A health source that raises yields no drop samples; the rest is still exposed."""
        MetricsObserver(registry, health=BrokenHealth())
        text = render_metrics(registry, openmetrics=True).decode()
        assert "# TYPE zeroclaw_telemetry_dropped counter" in text
        assert "zeroclaw_telemetry_dropped_total{" not in text


class TestObserverContract:
    def test_never_raises(self, registry):
        """An event that cannot be recorded is counted in `errors`, not raised."""
        health = TelemetryHealth()
        observer = MetricsObserver(registry, health=health)
        observer.on_event(llm_response(input_tokens=-1))
        observer.on_event(object())  # type: ignore[arg-type]
        assert 1 == observer.errors
        assert {"metrics": 1} == dict(health.snapshot().observer_errors)

    def test_one_observer_per_registry(self, registry):
        """A second observer on the same registry is refused by the duplicate check."""
        MetricsObserver(registry)
        with pytest.raises(ValueError, match="Duplicated timeseries"):
            MetricsObserver(registry)

    async def test_behind_a_multi_observer(self, run_scenario, registry):
        """Behind the fan-out the observer records like it does alone."""
        await run_scenario(mixed_turn(), observer=MultiObserver([MetricsObserver(registry)]))
        assert 1.0 == value(registry, "zeroclaw_turns_total", outcome="final")


class TestServeMetrics:
    async def test_content_negotiation_over_loopback(self, run_scenario, registry):
        """A plain scrape gets the text format; `Accept: application/openmetrics-text` gets
        OpenMetrics with exemplars."""
        spans = HashSpanIds()
        outcome, _ = await run_scenario(
            mixed_turn(), observer=chained(spans, MetricsObserver(registry))
        )
        server = serve_metrics(registry)
        try:
            async with httpx.AsyncClient(timeout=5) as client:
                plain = await client.get(server.url)
                om = await client.get(
                    server.url, headers={"Accept": "application/openmetrics-text"}
                )
        finally:
            server.close()
        assert (200, "text/plain; version=0.0.4; charset=utf-8") == (
            plain.status_code,
            plain.headers["content-type"],
        )
        assert "zeroclaw_tool_calls_total{" in plain.text
        assert "application/openmetrics-text" == om.headers["content-type"].split(";")[0]
        assert om.text.endswith("# EOF\n")
        assert f'trace_id="{spans.trace_id(outcome.turn_id)}"' in om.text

    def test_close_releases_the_port(self, registry):
        """After `close` the port no longer accepts scrapes."""
        server = serve_metrics(registry, port=0)
        url = server.url
        assert 0 != server.port
        server.close()
        with pytest.raises(httpx.ConnectError):
            httpx.get(url, timeout=2)
