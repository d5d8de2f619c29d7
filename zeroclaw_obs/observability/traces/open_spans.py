"""The span observer's memory: the open spans of every turn, and the ids of recent ones.

`OpenSpans` is what `SpanObserver` keeps between two events: for each open turn its live root
span and the children not closed yet (`OpenTurn`), and for `ids_for` the ids of the spans that
ended most recently. Handlers run on the event loop's thread, but `ids_for` and `tool_scope`
may be asked from anywhere, so every read and write takes one lock, held for a few dict
operations only.

Risky part: memory. Every map is bounded: a turn that never ends is evicted once
`max_open_turns` newer turns have started (its spans are counted as dropped), a turn keeps at
most `max_open_spans_per_turn` open children (`has_room`), and `max_recent_spans` ended spans
keep their ids.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from opentelemetry import context as otel_context
from opentelemetry.trace import Span, SpanContext

from ..events import EventIds, Ids
from ..health import HealthCounter, Signal, TelemetryHealth
from .deferred_spans import PendingSpan

__all__ = ["OpenSpans", "OpenTurn", "sampled_ids"]

OpenTool = tuple[PendingSpan, Ids | None, EventIds | None]
"""An open `execute_tool` span, its ids (None when the call has no ids of its own), and the
`EventIds` its two events hand on (made once, at the start, when its ids are known)."""


@dataclass(slots=True)
class OpenTurn:
    """The open spans of one turn."""

    root: Span
    """A live SDK span, started on the path: its sampling decision and ids are needed there."""
    context: otel_context.Context
    """`set_span_in_context(root)`: the explicit parent of every child."""
    ids: Ids | None
    """The root's ids, read once: metrics and logs ask for them on every event."""
    recording: bool
    """Whether the root records; an unsampled turn records no children (they follow it)."""
    chats: dict[int, PendingSpan] = field(default_factory=dict)
    """Open `chat` spans by iteration."""
    tools: dict[str, list[OpenTool]] = field(default_factory=dict)
    """Open `execute_tool` spans by call id; a list because a model may repeat an id."""
    open_children: int = 0
    provider_error: str | None = None
    """The last failed provider call's error type: the turn's `error.type` if it ends in error."""


class OpenSpans:
    """Open turns with their open children, and the ids of recently ended spans; bounded.

    Args:
        health: where evicted turns and spans without a turn are counted (`dropped`).
        max_open_turns: open turns kept; the oldest is evicted beyond this.
        max_open_spans_per_turn: open child spans a turn may keep (see `has_room`).
        max_recent_spans: ended spans whose ids `ids_for` still answers (a bounded LRU).

    Raises:
        ValueError: a bound is not a positive integer; the message names it.
    """

    def __init__(
        self,
        *,
        health: TelemetryHealth,
        max_open_turns: int,
        max_open_spans_per_turn: int,
        max_recent_spans: int,
    ) -> None:
        bounds = {
            "max_open_turns": max_open_turns,
            "max_open_spans_per_turn": max_open_spans_per_turn,
            "max_recent_spans": max_recent_spans,
        }
        for name, value in bounds.items():
            if value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {value}")
        self._health = health
        self._max_turns = max_open_turns
        self._max_children = max_open_spans_per_turn
        self._max_recent = max_recent_spans
        self._turns: OrderedDict[str, OpenTurn] = OrderedDict()
        self._recent: OrderedDict[tuple[str, str | None], Ids] = OrderedDict()
        self._lock = threading.Lock()

    # -- turns -----------------------------------------------------------------------------

    def open_turn(self, turn_id: str, turn: OpenTurn) -> None:
        """Keep `turn` open; a turn evicted for it is counted with its open children."""
        with self._lock:
            evicted = [self._turns.pop(turn_id)] if turn_id in self._turns else []
            self._turns[turn_id] = turn
            while len(self._turns) > self._max_turns:
                evicted.append(self._turns.popitem(last=False)[1])
        for old in evicted:
            # Never ended, so never exported: only the memory is reclaimed.
            self._health.increment(HealthCounter.DROPPED, Signal.TRACES, 1 + old.open_children)

    def close_turn(self, turn_id: str) -> OpenTurn | None:
        """Forget the turn (its root's ids stay in the recent ones); None if it is not open."""
        with self._lock:
            turn = self._turns.pop(turn_id, None)
        if turn is not None:
            self.remember(turn_id, None, turn.ids)
        return turn

    def turn(self, turn_id: str, *, for_span: bool = False) -> OpenTurn | None:
        """The open turn; with `for_span`, a missing turn counts the span it costs as dropped."""
        # Without the lock: one `get` is atomic under the GIL, and every writer of `_turns`
        # holds the lock, so this sees the map before or after a write, never during one.
        turn = self._turns.get(turn_id)
        if turn is None and for_span:
            # Evicted, or the observer was added mid-turn: nothing to parent the span on.
            self._health.increment(HealthCounter.DROPPED, Signal.TRACES)
        return turn

    def has_room(self, turn: OpenTurn) -> bool:
        """Whether one more child may stay open (the per-turn bound on memory)."""
        return turn.open_children < self._max_children

    def turn_with_room(self, turn_id: str) -> OpenTurn | None:
        """The open turn if it records and may keep one more child open, else None (a missing
        turn counts the span it costs as dropped): where a `chat` or `execute_tool` opens."""
        turn = self._turns.get(turn_id)  # `turn(turn_id, for_span=True)`
        if turn is None:
            self._health.increment(HealthCounter.DROPPED, Signal.TRACES)
            return None
        if not turn.recording or turn.open_children >= self._max_children:
            return None
        return turn

    # -- children --------------------------------------------------------------------------

    def open_chat(self, turn: OpenTurn, iteration: int, span: PendingSpan) -> None:
        with self._lock:
            turn.chats[iteration] = span
            turn.open_children += 1

    def close_chat(self, turn: OpenTurn, iteration: int) -> PendingSpan | None:
        with self._lock:
            span = turn.chats.pop(iteration, None)
            if span is not None:
                turn.open_children -= 1
        return span

    def open_tool(self, turn: OpenTurn, call_id: str, opened: OpenTool) -> int:
        """Keep the call's span open; how many are open under its id now (1: only this)."""
        with self._lock:
            spans = turn.tools.setdefault(call_id, [])
            spans.append(opened)
            turn.open_children += 1
            return len(spans)

    def close_tool(self, turn: OpenTurn, call_id: str) -> OpenTool | None:
        """The call's oldest open span, no longer open; None when it has none."""
        with self._lock:
            return self._pop_tool(turn, call_id)

    def end_tool(self, turn_id: str, turn: OpenTurn, call_id: str) -> OpenTool | None:
        """`close_tool`, and `remember` the span's ids, in one hold of the lock (so `ids_for`
        never misses them in between); None when the call has no open span."""
        with self._lock:
            opened = self._pop_tool(turn, call_id)
            if opened is not None and opened[1] is not None:
                self._keep((turn_id, call_id), opened[1])
            return opened

    def _pop_tool(self, turn: OpenTurn, call_id: str) -> OpenTool | None:
        # Under the lock.
        spans = turn.tools.get(call_id)
        if not spans:
            return None
        opened = spans.pop(0)
        if not spans:
            del turn.tools[call_id]
        turn.open_children -= 1
        return opened

    def tool_span(self, turn: OpenTurn, call_id: str, *, newest: bool = False) -> Span | None:
        """The call's oldest (or newest) open span, still open; None when it has none."""
        with self._lock:
            spans = turn.tools.get(call_id)
            return spans[-1 if newest else 0][0] if spans else None

    # -- ids -------------------------------------------------------------------------------

    def remember(self, turn_id: str, call_id: str | None, ids: Ids | None) -> None:
        """Keep the ids of a span that ended, for `ids_for` (the oldest beyond the bound go)."""
        if ids is None:
            return
        with self._lock:
            self._keep((turn_id, call_id), ids)

    def _keep(self, key: tuple[str, str | None], ids: Ids) -> None:
        # Under the lock.
        recent = self._recent
        recent[key] = ids
        recent.move_to_end(key)
        while len(recent) > self._max_recent:
            recent.popitem(last=False)

    def ids_for(self, turn_id: str, call_id: str | None) -> Ids | None:
        """The ids of the call's open span or the turn's root, else of a recent one."""
        with self._lock:
            turn = self._turns.get(turn_id)
            if turn is not None:
                if call_id is None:
                    return turn.ids
                spans = turn.tools.get(call_id)
                if spans:
                    return spans[0][1]
            return self._recent.get((turn_id, call_id))


def sampled_ids(ctx: SpanContext) -> Ids | None:
    """(trace_id as 32 hex, span_id as 16 hex) of a sampled span, else None (an id that leads
    to no trace is worse than none): what `OpenTurn.ids` holds for the root."""
    if not ctx.is_valid or not ctx.trace_flags.sampled:
        return None
    return format(ctx.trace_id, "032x"), format(ctx.span_id, "016x")
