"""The telemetry chain: one ordered fan-out of observer events, span step first.

    event ─▶ span step (`SpanObserver.record`) ─▶ EventIds(root, span)
                                                    │
                  ┌──────────────────┬──────────────┴───┐
                  ▼                  ▼                  ▼
           metrics.record     logs.record       trace tree.record      (event, ids)
                  then plain observers (progress lines, …): on_event(event)

In the runtime the three signals share one queue (`signal_queue.SignalQueue`, itself the one
signal of the chain): the turn queues `(time, event, ids)` once and its worker feeds them.

The span step returns the ids of the spans the event belongs to, and the chain hands
`(event, ids)` to every signal, so a metric's exemplar and a log line point at the span that
is exported: the order is code, not a convention about where an observer sits in a list.
Each step is isolated: one that raises is counted (`failures`) and logged once per exception
type, and the others still run; the turn never sees it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from .events import NO_IDS, EventIds, ObserverEvent
from .observer import Observer

__all__ = ["SignalObserver", "SpanStep", "TelemetryChain"]

_log = logging.getLogger(__name__)


@runtime_checkable
class SpanStep(Protocol):
    """The tracing side: records an event and says which spans it belongs to."""

    def record(self, event: ObserverEvent) -> EventIds:
        """Record `event`; the ids of its spans (`NO_IDS` when none). Must not raise."""
        ...


class SignalObserver(Protocol):
    """A signal fed after the span step: metrics, logs, the trace tree."""

    def record(self, event: ObserverEvent, ids: EventIds) -> None:
        """Record `event`, whose spans are `ids`. Must not block or raise."""
        ...


class TelemetryChain:
    """`Observer`: the span step, then every signal with the ids, then plain observers."""

    def __init__(
        self,
        spans: SpanStep | None,
        signals: Sequence[SignalObserver] = (),
        observers: Sequence[Observer] = (),
    ) -> None:
        self._spans = spans
        self._scope = getattr(spans, "tool_scope", None)
        self._signals = tuple(signals)
        self._observers = tuple(observers)
        self.failures = 0
        """Steps that raised (each is logged once per exception type)."""
        self._reported: set[tuple[int, type]] = set()

    @property
    def wants_messages(self) -> bool:
        """Whether the span step asks for message content (see `MultiObserver`)."""
        return bool(getattr(self._spans, "wants_messages", False))

    def tool_scope(self, turn_id: str, tool_call_id: str) -> AbstractContextManager[None] | None:
        """The span step's scope for a running call (`ToolScopes`); None when it has none or
        fails (`observer.tool_scope` then gives the empty one). On every call's path: the step's
        method, read once, called straight."""
        scope = self._scope
        if scope is None:
            return None
        try:
            return scope(turn_id, tool_call_id)  # type: ignore[no-any-return]
        except Exception:
            return None

    def on_event(self, event: ObserverEvent) -> None:
        ids = NO_IDS
        if self._spans is not None:
            try:
                ids = self._spans.record(event)
            except Exception as exc:
                self._failed(self._spans, exc)
        for signal in self._signals:
            try:
                signal.record(event, ids)
            except Exception as exc:
                self._failed(signal, exc)
        for observer in self._observers:
            try:
                observer.on_event(event)
            except Exception as exc:
                self._failed(observer, exc)

    def _failed(self, step: object, exc: Exception) -> None:
        self.failures += 1
        key = (id(step), type(exc))
        if key not in self._reported:
            self._reported.add(key)
            with contextlib.suppress(Exception):
                # The type only: an exception message could quote a payload.
                _log.warning("observer %s failed: %s", type(step).__name__, type(exc).__name__)
