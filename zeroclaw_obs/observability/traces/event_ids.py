"""Which spans an observer event belongs to: the ids the telemetry chain hands to metrics,
logs and the tree (`SpanObserver.record`), so each points at the span that is exported.

Split from `tracing.py`, which records the spans; this module only routes an event to the
lookup that answers for it (`SpanIds`, implemented by `SpanObserver`).
"""

from __future__ import annotations

from typing import Protocol

from ..events import (
    ApprovalDecision,
    EventIds,
    Ids,
    LlmRequest,
    LlmResponse,
    LoopDetection,
    ObserverEvent,
    ProviderAttempt,
    ToolCall,
    ToolCallStart,
    ToolProgress,
)

__all__ = ["CHAT_ENDS", "SpanIds", "event_ids"]

_TOOL_EVENTS = (ToolCallStart, ToolCall, ToolProgress)
CHAT_ENDS = (LlmResponse, ProviderAttempt)
"""Built once: `isinstance` against a tuple, not a `X | Y` union made on every event."""


class SpanIds(Protocol):
    """The span lookups `event_ids` routes to (`SpanObserver`'s public ones)."""

    def ids_for(self, turn_id: str, tool_call_id: str | None = None) -> Ids | None: ...

    def chat_ids_for(self, turn_id: str, iteration: int) -> Ids | None: ...

    def approval_ids_for(self, turn_id: str, tool_call_id: str) -> Ids | None: ...


def event_ids(event: ObserverEvent, spans: SpanIds, chat: Ids | None) -> EventIds:
    """The ids of the spans `event` belongs to, looked up after its handler ran (`chat`: a
    provider call's, read before its handler closed the span). May raise what a lookup
    raises; the caller counts it."""
    turn_id = event.correlation.turn_id
    root = spans.ids_for(turn_id)
    # The tool events first: two of them on every call.
    if isinstance(event, _TOOL_EVENTS):
        return EventIds(root, spans.ids_for(turn_id, event.tool_call_id))
    if isinstance(event, LlmRequest):
        return EventIds(root, spans.chat_ids_for(turn_id, event.iteration))
    if isinstance(event, CHAT_ENDS):
        return EventIds(root, chat)
    if isinstance(event, ApprovalDecision):
        return EventIds(root, spans.approval_ids_for(turn_id, event.tool_call_id))
    if isinstance(event, LoopDetection) and event.tool_call_id:
        return EventIds(root, spans.ids_for(turn_id, event.tool_call_id))
    return EventIds(root, None)
