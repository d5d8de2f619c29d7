"""The span step's shortcuts on the turn's path give what the plain code gave."""

from __future__ import annotations

from opentelemetry import context as otel_context
from opentelemetry.trace import INVALID_SPAN, SpanContext, SpanKind

from zeroclaw_obs.observability.events import EventIds, ToolCallStart
from zeroclaw_obs.observability.health import TelemetryHealth
from zeroclaw_obs.observability.traces.deferred_spans import (
    Deferred,
    PendingSpan,
    SetAttribute,
)
from zeroclaw_obs.observability.traces.open_spans import OpenSpans, OpenTurn

from ...builders import Traced, _in_turn_t1, tool_call_event


class TestDeferred:
    def test_make_is_called_with_its_source_on_every_replay(self):
        """`apply` runs what `make(source)` returns."""
        seen = []
        deferred = Deferred(lambda n: [SetAttribute("n", n)], 3)
        span = PendingSpan(
            "s", SpanContext(1, 2, False), otel_context.Context(), SpanKind.INTERNAL, 0, {}
        )
        span.set_attribute = lambda k, v: seen.append((k, v))  # type: ignore[method-assign]
        deferred.apply(span)
        deferred.apply(span)
        assert [("n", 3), ("n", 3)] == seen


class TestEndTool:
    def test_the_ids_are_remembered_as_the_span_closes(self):
        """`end_tool` closes the oldest span and `ids_for` answers with its ids after."""
        spans = OpenSpans(
            health=TelemetryHealth(),
            max_open_turns=2,
            max_open_spans_per_turn=2,
            max_recent_spans=2,
        )
        turn = OpenTurn(
            root=INVALID_SPAN,
            context=otel_context.Context(),
            ids=("t" * 32, "r" * 16),
            recording=True,
        )
        spans.open_turn("t1", turn)
        span = PendingSpan(
            "s", SpanContext(1, 2, False), otel_context.Context(), SpanKind.INTERNAL, 0, {}
        )
        spans.open_tool(turn, "c1", (span, ("t" * 32, "1" * 16), None))
        assert span is spans.end_tool("t1", turn, "c1")[0]
        assert (("t" * 32, "1" * 16), 0, None) == (
            spans.ids_for("t1", "c1"),
            turn.open_children,
            spans.end_tool("t1", turn, "c1"),
        )


class TestToolIds:
    def test_both_events_hand_on_the_ids_of_the_exported_span(self):
        """The start's and the end's `EventIds` are the ids of the `execute_tool` span."""
        traced = Traced()
        observer = traced.observer
        root = traced.provider.get_tracer("t").start_span("root")
        ids = ("a" * 32, "b" * 16)
        turn = OpenTurn(root=root, context=otel_context.Context(), ids=ids, recording=True)
        observer._open.open_turn("t1", turn)
        fields = _in_turn_t1(tool_call_id="c1", tool="echo", provenance="native")
        start = observer.record(ToolCallStart(**fields, arguments="{}", time_ns=1))
        end = observer.record(tool_call_event(start_time_ns=1, time_ns=2))
        (span,) = [s for s in traced.spans if s.name == "execute_tool echo"]
        expected = EventIds(ids, ("a" * 32, format(span.context.span_id, "016x")))
        assert (expected, expected) == (start, end)
