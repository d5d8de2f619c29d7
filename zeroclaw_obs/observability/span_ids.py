"""Which span an observer event belongs to: the ids metrics exemplars and log lines carry.

The span observer answers through the small `SpanIds` protocol; `SpanIdCache` keeps the ids of
open spans so the event that ends a span (`ToolCall`, `AgentEnd`) still finds them. Metrics
and logs both read it, so it lives apart from either.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["Ids", "SpanIdCache", "SpanIds"]

Ids = tuple[str, str]
"""(trace_id as 32 lowercase hex, span_id as 16 lowercase hex)."""


@runtime_checkable
class SpanIds(Protocol):
    """The tracing side's answer to "which span does this event belong to?".

    Implemented by the span observer; metrics and logs only read it.
    """

    def ids_for(self, turn_id: str, tool_call_id: str | None = None) -> Ids | None:
        """(trace_id, span_id) of the call's tool span, or of the turn's root span when
        `tool_call_id` is None; None when no such span is known. Must not block or raise."""
        ...


class SpanIdCache:
    """Remembers the span ids of open turns and tool calls, per turn.

    The span observer may forget a span once it ends, yet the event that ends it (`ToolCall`,
    `AgentEnd`) is the one metrics and logs must correlate. So the ids are read when the span
    opens (`remember`), served from here until it closes (`forget`), and read live only when
    they were not known at the opening. Memory is bounded by the open turns and their calls.
    Used from the event loop's thread only, like every observer.
    """

    def __init__(self, source: SpanIds | None) -> None:
        self._source = source
        self._turns: dict[str, dict[str | None, Ids]] = {}

    def remember(self, turn_id: str, tool_call_id: str | None = None) -> Ids | None:
        """Look up and keep the ids of the turn's root span or of one tool span."""
        ids = self._live(turn_id, tool_call_id)
        if ids is not None:
            self._turns.setdefault(turn_id, {})[tool_call_id] = ids
        return ids

    def lookup(self, turn_id: str, tool_call_id: str | None = None) -> Ids | None:
        """The kept ids, else the tracing side's current answer."""
        ids = self._turns.get(turn_id, {}).get(tool_call_id)
        return ids if ids is not None else self._live(turn_id, tool_call_id)

    def forget(self, turn_id: str, tool_call_id: str | None = None) -> Ids | None:
        """Return the ids one last time and drop them; forgetting the turn drops its calls."""
        ids = self.lookup(turn_id, tool_call_id)
        if tool_call_id is None:
            self._turns.pop(turn_id, None)
        else:
            self._turns.get(turn_id, {}).pop(tool_call_id, None)
        return ids

    def _live(self, turn_id: str, tool_call_id: str | None) -> Ids | None:
        if self._source is None:
            return None
        try:
            return self._source.ids_for(turn_id, tool_call_id)
        except Exception:
            return None  # a broken tracer must not cost us the metric or the log line
