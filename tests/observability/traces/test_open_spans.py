"""The span observer's memory: open turns and children, recent ids, every bound counted."""

from __future__ import annotations

import pytest
from opentelemetry import context as otel_context
from opentelemetry.trace import INVALID_SPAN, SpanContext, SpanKind, TraceFlags

from zeroclaw_obs.observability.health import TelemetryHealth
from zeroclaw_obs.observability.traces.deferred_spans import PendingSpan
from zeroclaw_obs.observability.traces.open_spans import OpenSpans, OpenTurn


def memory(**bounds: int) -> tuple[OpenSpans, TelemetryHealth]:
    health = TelemetryHealth()
    limits = {"max_open_turns": 4, "max_open_spans_per_turn": 4, "max_recent_spans": 4}
    return OpenSpans(health=health, **{**limits, **bounds}), health


def turn(ids: tuple[str, str] | None = ("t" * 32, "r" * 16)) -> OpenTurn:
    return OpenTurn(root=INVALID_SPAN, context=otel_context.Context(), ids=ids, recording=True)


def pending(span_id: int) -> PendingSpan:
    context = SpanContext(1, span_id, is_remote=False, trace_flags=TraceFlags(1))
    return PendingSpan("s", context, otel_context.Context(), SpanKind.INTERNAL, 0, {})


class TestTurns:
    def test_the_oldest_turn_is_evicted_and_counted_with_its_children(self):
        spans, health = memory(max_open_turns=1)
        old = turn()
        spans.open_turn("t1", old)
        spans.open_tool(old, "c1", (pending(1), None))
        spans.open_turn("t2", turn())
        assert (None, 2) == (spans.turn("t1"), health.snapshot().dropped["traces"])

    def test_a_span_without_its_turn_is_counted_when_asked_for_one(self):
        spans, health = memory()
        assert None is spans.turn("gone")
        assert None is spans.turn("gone", for_span=True)
        assert {"traces": 1} == dict(health.snapshot().dropped)

    def test_a_turn_with_room_is_the_turn_for_a_span_that_records_and_fits(self):
        """`turn_with_room` answers as `turn(…, for_span=True)` then the recording and room
        checks: a missing turn is counted once, an unsampled or full one is not."""
        spans, health = memory(max_open_spans_per_turn=1)
        unsampled = turn()
        unsampled.recording = False
        full = turn()
        spans.open_turn("unsampled", unsampled)
        spans.open_turn("full", full)
        spans.open_tool(full, "c1", (pending(1), None))
        spans.open_turn("open", open_turn := turn())
        assert [None, None, None, open_turn] == [
            spans.turn_with_room(turn_id) for turn_id in ("gone", "unsampled", "full", "open")
        ]
        assert {"traces": 1} == dict(health.snapshot().dropped)

    def test_a_closed_turn_keeps_its_root_ids(self):
        spans, _ = memory()
        spans.open_turn("t1", turn(("a" * 32, "b" * 16)))
        assert spans.close_turn("t1") is not None
        assert None is spans.close_turn("t1")
        assert ("a" * 32, "b" * 16) == spans.ids_for("t1", None)

    @pytest.mark.parametrize("bound", ["max_open_turns", "max_recent_spans"])
    def test_bounds_are_validated(self, bound):
        with pytest.raises(ValueError, match=f"{bound} must be a positive integer"):
            memory(**{bound: 0})


class TestChildren:
    def test_the_per_turn_room_follows_open_children(self):
        spans, _ = memory(max_open_spans_per_turn=2)
        open_turn = turn()
        spans.open_chat(open_turn, 1, pending(1))
        spans.open_tool(open_turn, "c1", (pending(2), None))
        assert not spans.has_room(open_turn)
        assert spans.close_chat(open_turn, 1) is not None
        assert spans.has_room(open_turn)

    def test_a_repeated_call_id_closes_oldest_first(self):
        """A model may repeat an id: spans close in the order they opened; the scope of the
        newest call is the newest span."""
        spans, _ = memory()
        open_turn = turn()
        first, second = pending(1), pending(2)
        spans.open_tool(open_turn, "c1", (first, ("t" * 32, "1" * 16)))
        spans.open_tool(open_turn, "c1", (second, ("t" * 32, "2" * 16)))
        assert (first, second) == (
            spans.tool_span(open_turn, "c1"),
            spans.tool_span(open_turn, "c1", newest=True),
        )
        assert first is spans.close_tool(open_turn, "c1")[0]
        assert second is spans.close_tool(open_turn, "c1")[0]
        assert None is spans.close_tool(open_turn, "c1")
        assert None is spans.tool_span(open_turn, "c1")


class TestIds:
    def test_open_spans_answer_then_recent_ones_within_the_bound(self):
        spans, _ = memory(max_recent_spans=2)
        open_turn = turn()
        spans.open_turn("t1", open_turn)
        spans.open_tool(open_turn, "c1", (pending(1), ("t" * 32, "1" * 16)))
        assert ("t" * 32, "1" * 16) == spans.ids_for("t1", "c1")
        for n in range(3):
            spans.remember("t0", f"r{n}", ("t" * 32, f"{n}" * 16))
        assert (None, ("t" * 32, "2" * 16)) == (
            spans.ids_for("t0", "r0"),
            spans.ids_for("t0", "r2"),
        )
