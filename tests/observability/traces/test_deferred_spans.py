"""Deferred spans: a record made on the turn's path becomes the SDK span it describes."""

from __future__ import annotations

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from zeroclaw_obs.observability.traces.deferred_spans import (
    MAX_OPERATIONS,
    PendingSpan,
    RootEnd,
    SetAttribute,
    SetAttributes,
    SetStatus,
)
from zeroclaw_obs.observability.traces.span_ids import install_handoff


@pytest.fixture
def memory() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def tracer(memory):
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    yield provider.get_tracer("zeroclaw_obs.test")
    provider.shutdown()


def pending(tracer, *, span_id: int = 0xABC, start_ns: int = 10, **attributes) -> PendingSpan:
    root = tracer.start_span("root")
    parent = root.get_span_context()
    context = SpanContext(
        parent.trace_id, span_id, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED)
    )
    return PendingSpan(
        "child",
        context,
        trace.set_span_in_context(root),
        SpanKind.CLIENT,
        start_ns,
        dict(attributes),
    )


class TestPendingSpan:
    def test_build_gives_the_recorded_ids_times_and_attributes(self, tracer, memory):
        span = pending(tracer, span_id=0xABC, start_ns=10, a="1")
        span.close(20, SetAttribute("b", 2))
        span.build(tracer, install_handoff(tracer))
        (built,) = memory.get_finished_spans()
        assert (0xABC, 10, 20, SpanKind.CLIENT, {"a": "1", "b": 2}) == (
            built.context.span_id,
            built.start_time,
            built.end_time,
            built.kind,
            dict(built.attributes),
        )
        assert span.context.trace_id == built.context.trace_id

    def test_code_inside_replays_before_the_closing_operations(self, tracer, memory):
        """What a tool's code records lands on the span; the engine's closing values win."""
        span = pending(tracer)
        span.set_attribute("user.key", [1, 2])
        span.set_attribute("zeroclaw.tool.outcome", "user-value")
        span.add_event("user.event", {"n": 1}, timestamp=15)
        span.record_exception(ValueError("bad"), timestamp=16)
        span.end()  # ignored: the engine ends it
        assert span.is_recording()
        span.close(20, SetAttributes({"zeroclaw.tool.outcome": "success"}))
        span.set_attribute("late", "ignored")
        assert not span.is_recording()
        span.build(tracer, install_handoff(tracer))
        (built,) = memory.get_finished_spans()
        assert ((1, 2), "success", None) == (
            built.attributes["user.key"],
            built.attributes["zeroclaw.tool.outcome"],
            built.attributes.get("late"),
        )
        assert [("user.event", 15), ("exception", 16)] == [
            (e.name, e.timestamp) for e in built.events
        ]
        assert "ValueError" == built.events[1].attributes["exception.type"]

    def test_a_list_is_copied_when_recorded(self, tracer, memory):
        span = pending(tracer)
        values = ["a"]
        span.set_attribute("k", values)
        values.append("b")
        span.close(20).build(tracer, install_handoff(tracer))
        assert ("a",) == memory.get_finished_spans()[0].attributes["k"]

    def test_operations_are_bounded(self, tracer):
        span = pending(tracer)
        for n in range(MAX_OPERATIONS + 10):
            span.set_attribute(f"k{n}", n)
        assert MAX_OPERATIONS == len(span.ops)

    def test_status_from_the_closing_operations(self, tracer, memory):
        span = pending(tracer)
        span.close(20, SetStatus(Status(StatusCode.ERROR, "why")))
        span.build(tracer, install_handoff(tracer))
        (built,) = memory.get_finished_spans()
        assert (StatusCode.ERROR, "why") == (built.status.status_code, built.status.description)


class TestRootEnd:
    def test_ends_the_live_root_with_its_attributes_and_status(self, tracer, memory):
        root = tracer.start_span("root", start_time=1)
        RootEnd(root, 9, {"zeroclaw.turn.outcome": "error"}, Status(StatusCode.ERROR)).build(
            tracer, None
        )
        (built,) = memory.get_finished_spans()
        assert ("error", StatusCode.ERROR, 9) == (
            built.attributes["zeroclaw.turn.outcome"],
            built.status.status_code,
            built.end_time,
        )
