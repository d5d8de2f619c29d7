"""A pending span's ids: the handoff of a span id to the SDK, and a child's context."""

from __future__ import annotations

import threading

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import SpanContext, TraceFlags, TraceState

from zeroclaw_obs.observability.traces.span_ids import (
    SpanIdHandoff,
    child_context,
    install_handoff,
)


class Fixed(RandomIdGenerator):
    def generate_span_id(self) -> int:
        return 7


class TestSpanIdHandoff:
    def test_a_handed_id_is_used_once_on_its_thread(self):
        handoff = SpanIdHandoff(Fixed())
        handoff.give(42)
        seen: list[int] = []
        other = threading.Thread(target=lambda: seen.append(handoff.generate_span_id()))
        other.start()
        other.join()
        assert ([7], 42, 7) == (seen, handoff.generate_span_id(), handoff.generate_span_id())

    def test_install_wraps_once_and_skips_tracers_without_a_generator(self):
        tracer = TracerProvider().get_tracer("zeroclaw_obs.test")
        first = install_handoff(tracer)
        assert first is install_handoff(tracer) is tracer.id_generator
        assert None is install_handoff(trace.NoOpTracer())


class TestChildContext:
    def test_it_equals_the_span_context_the_api_builds(self):
        """Same tuple, validity included, for valid and invalid ids."""
        state = TraceState([("k", "v")])
        for trace_id, span_id in [(1, 2), (2**128 - 1, 2**64 - 1), (0, 5), (7, 0), (7, 2**64)]:
            root = SpanContext(
                trace_id, 9, is_remote=True, trace_flags=TraceFlags(1), trace_state=state
            )
            expected = SpanContext(
                trace_id,
                span_id,
                is_remote=False,
                trace_flags=root.trace_flags,
                trace_state=root.trace_state,
            )
            made = child_context(root, span_id)
            assert (SpanContext, expected, expected.is_valid) == (type(made), made, made.is_valid)
