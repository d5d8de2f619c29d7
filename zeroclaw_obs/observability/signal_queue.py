"""One queue for the signals that leave the turn's path: metrics, log lines, the trace tree.

    chain ─▶ SignalQueue.record(event, ids) ─▶ (time, event, ids) ─▶ one worker:
                                                  metrics.apply, logs.apply, tree.apply

Each of the three used to keep a queue of its own, so every event the turn recorded was
queued up to three times (a lock, a tuple and a bounds check each). The turn now queues an
event once, with the moment it was recorded (a log line's `timestamp`) and its span ids; the
worker hands every batch, in order, to each signal, which takes the events it records.

The worker runs when the telemetry sidecars do (`BoundedBatcher.sidecar`): at the end of every
turn, every second unless a burst is on, and before every read of what it feeds (a scrape of
the registry, the drawing of the tree); when half the queue waits, it applies what is over
that mark. The bound, 65,536 events, holds a burst of ~16,000 calls (two events each) before
the worker must run beside the turn. A full queue drops the event and counts it under each
signal that would have recorded it (`lost_as`; the tree counts none, as a terminal view).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Protocol

from .batching import BoundedBatcher
from .events import AgentEnd, EventIds, ObserverEvent
from .health import HealthCounter, Signal, TelemetryHealth

__all__ = ["Queued", "QueuedSignal", "SignalQueue"]

Queued = tuple[float, ObserverEvent, EventIds]
"""A queued event: when the turn recorded it (`time.time()`), the event, its span ids."""


class QueuedSignal(Protocol):
    """A signal the queue feeds: it says which events it records and applies them in batches."""

    lost_as: Signal | None
    """Under which signal a lost event of its kinds is counted (None: not counted)."""

    def kinds(self) -> Iterable[type]:
        """The event types it records (by exact type)."""
        ...

    def apply(self, batch: Sequence[Queued]) -> None:
        """Record the events of `batch` it records, in order, on the queue's worker. Must
        not raise (a failure is counted by the signal)."""
        ...


class SignalQueue:
    """`SignalObserver`: queues each event one of its signals records, once; one worker
    applies every batch to each signal in turn.

    Args:
        health: where lost events are counted, by signal.
        max_queue_size: the most events waiting; more are dropped and counted.
        max_export_batch_size: the most events per batch.
        schedule_delay_s: the longest an event waits while no burst of events is on (see
            `BoundedBatcher.sidecar`).
    """

    def __init__(
        self,
        *,
        health: TelemetryHealth,
        max_queue_size: int = 65536,
        max_export_batch_size: int = 512,
        schedule_delay_s: float = 1.0,
    ) -> None:
        self._signals: tuple[QueuedSignal, ...] = ()
        self._kinds: frozenset[type] = frozenset()
        self._lost_as: dict[type, tuple[Signal, ...]] = {}
        self._health = health
        self._batcher: BoundedBatcher[Queued] = BoundedBatcher.sidecar(
            self._apply,
            signal=Signal.LOGS,
            health=health,
            max_queue_size=max_queue_size,
            max_export_batch_size=max_export_batch_size,
            schedule_delay_s=schedule_delay_s,
            name="signals-apply",
            signals_of=self._signals_of,
        )
        self._emit = self._batcher.emit

    def add(self, signal: QueuedSignal) -> None:
        """Feed `signal` too, from the next event on (call before the first turn)."""
        self._signals = (*self._signals, signal)
        kinds = set(self._kinds)
        for kind in signal.kinds():
            kinds.add(kind)
            if signal.lost_as is not None:
                self._lost_as[kind] = (*self._lost_as.get(kind, ()), signal.lost_as)
        self._kinds = frozenset(kinds)

    def record(self, event: ObserverEvent, ids: EventIds) -> None:
        """Queue `event` if a signal records it (the chain's step after the span step); the
        end of a turn wakes the worker. Never blocks (beyond a short lock) or raises."""
        kind = type(event)
        if kind in self._kinds:
            self._emit((_now(), event, ids))  # events are read-only, ids are strings
            if kind is AgentEnd:
                self._batcher.wake()

    def force_flush(self, timeout_s: float) -> bool:
        """Apply every queued event now; wait at most `timeout_s`. True when done in time."""
        return self._batcher.force_flush(timeout_s)

    def shutdown(self, timeout_s: float) -> bool:
        """Apply what is queued and stop the worker within `timeout_s`; the rest is counted."""
        return self._batcher.shutdown(timeout_s)

    def _apply(self, batch: list[Queued]) -> bool:
        for signal in self._signals:
            try:
                signal.apply(batch)
            except Exception:
                # A signal counts its own failures; this one escaped, so it costs the batch.
                if signal.lost_as is not None:
                    self._health.increment(HealthCounter.OBSERVER_ERRORS, signal.lost_as)
        return True

    def _signals_of(self, item: Queued) -> tuple[Signal, ...]:
        return self._lost_as.get(type(item[1]), ())


_now = time.time
