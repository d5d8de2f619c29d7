"""Bounded batching: when telemetry ships, off the turn's path, with every loss counted.

`BoundedBatcher` is a bounded queue drained by one worker thread; it knows nothing of the
signal, so spans (`BoundedBatchSpanProcessor`) and log lines (`logs.QueuedLogger`) share it.
`emit` never blocks and counts every drop in `TelemetryHealth`; the worker catches export
errors and counts them; shutdown and flush have deadlines.

Two more things the SDK's own batch processors do, done here too: an export runs with
instrumentation suppressed (the context key the SDK sets), so an instrumented HTTP client
inside an exporter never traces the export itself; and a forked child gets a fresh queue and
worker (`os.register_at_fork`), since the parent's thread does not exist there.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterable
from typing import Generic, TypeVar

from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY, Context, attach, detach, set_value
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from .health import HealthCounter, Signal, TelemetryHealth

__all__ = ["DROP_LOG_INTERVAL_S", "BoundedBatchSpanProcessor", "BoundedBatcher", "half_queue"]

_log = logging.getLogger(__name__)

T = TypeVar("T")

DROP_LOG_INTERVAL_S = 60.0
"""At most one drop warning per signal per minute: drop logging must not flood."""


def half_queue(max_queue_size: int, max_export_batch_size: int) -> int:
    """The `wake_at` of workers that should not run while a turn is busy: half the queue (a
    memory bound), never below one batch. RE2 releases the GIL on every match, so a worker
    that redacts in the middle of a busy turn trades the GIL with it at every call; such a
    worker waits for the turn's end (`wake`), this mark, or its delay once a burst is over
    (`BoundedBatcher.sidecar`)."""
    return max(max_export_batch_size, max_queue_size // 2)


class _RateLimitedWarning:
    """Logs a message at most once per interval, so a broken backend cannot flood the log."""

    def __init__(self, message: str, interval_s: float = DROP_LOG_INTERVAL_S) -> None:
        self._message = message
        self._interval = interval_s
        self._next = 0.0

    def __call__(self, *args: object) -> None:
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self._interval
            _log.warning(self._message, *args)


class BoundedBatcher(Generic[T]):
    """A bounded queue drained in batches by one worker thread; one implementation per signal.

    `emit` never blocks and never raises: when the queue is full the item is dropped and
    counted. The worker wakes every `schedule_delay_s`, or early once `wake_at` items wait (a
    full batch by default), and hands batches to `export`; a batch whose export returns False
    or raises is counted as one export failure and its items as dropped (there is no retry
    here; exporters retry within their own timeout). `force_flush` and `shutdown` wait at most
    their timeout; at the shutdown deadline the items still queued *and* those in the export
    that has not returned are counted as dropped and as timed out (a collector that accepts
    and never answers loses them; they are never lost silently).

    Args:
        export: ships one batch; returns True on success. Called only from the worker thread.
        signal: the `signal` label of the counts.
        health: where drops and failures are counted.
        max_queue_size: the bound; items beyond it are dropped.
        max_export_batch_size: the most items per `export` call.
        schedule_delay_s: the longest an item waits before the worker looks at the queue.
        wake_at: the queue length that wakes the worker early (default: a full batch, as the
            OpenTelemetry batch processors do). A higher mark keeps a burst from waking it.
        name: the worker thread's name after `zeroclaw-` (default: `<signal>-export`).
        defer_bursts: while the queue fills fast, ship only what the bound requires: when the
            delay ends with a whole batch or more come in since the last look, look again one
            delay later; when the mark wakes the worker, ship batches until the queue is
            below it. `wake`, a flush and shutdown still ship everything at once.
        signals_of: the signals an item belongs to, for a queue that several signals share
            (`signal_queue.SignalQueue`): a lost item is counted once under each of them
            (default: under `signal`), and the warnings name the queue by `name`.

    Raises:
        ValueError: a size or delay breaks its rule; the message names the rule.
    """

    def __init__(
        self,
        export: Callable[[list[T]], bool],
        *,
        signal: Signal,
        health: TelemetryHealth,
        max_queue_size: int = 2048,
        max_export_batch_size: int = 512,
        schedule_delay_s: float = 5.0,
        wake_at: int | None = None,
        name: str | None = None,
        defer_bursts: bool = False,
        signals_of: Callable[[T], Iterable[Signal]] | None = None,
    ) -> None:
        _validate(max_queue_size, max_export_batch_size, schedule_delay_s)
        if wake_at is not None and not max_export_batch_size <= wake_at <= max_queue_size:
            raise ValueError(
                f"wake_at must be between max_export_batch_size and max_queue_size, got {wake_at}"
            )
        self._export = export
        self._signal = signal
        self._health = health
        self._queue: deque[T] = deque(maxlen=max_queue_size)  # the bound
        self._max_queue_size = max_queue_size
        self._batch_size = max_export_batch_size
        self._wake_at = wake_at or max_export_batch_size
        self._delay = schedule_delay_s
        self._defer_bursts = defer_bursts
        self._everything = False
        """Set by `wake`: the next drain ships everything, even mid-burst."""
        self._lock = threading.Lock()
        self._room = threading.Condition(self._lock)
        """Notified whenever the worker takes items out (or gives up): see `wait_for_room`."""
        self._wake = threading.Event()
        self._flush_waiters: list[threading.Event] = []
        self._closing = False
        self._abandoned = False
        self._in_flight: list[T] = []
        """The batch the worker is exporting now; counted as dropped if abandoned."""
        self._signals_of = signals_of
        self._label = signal.value if signals_of is None or name is None else name
        """What the warnings call the queue: its signal, or a shared queue's name."""
        self._wait_until: float | None = None
        """The earliest deadline a caller is (or was) waiting on the worker for, until the worker
        next finishes a drain; shutdown never waits past it (exit pays for a stuck export once)."""
        self._warn_dropped = _RateLimitedWarning(
            "%s queue full or closed: dropping (counted in zeroclaw_telemetry_dropped_total)"
        )
        self._warn_failed = _RateLimitedWarning("%s export raised %s: batch dropped (counted)")
        self._name = f"zeroclaw-{name or signal.value + '-export'}"
        self._worker = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._worker.start()
        if hasattr(os, "register_at_fork"):
            reinit = weakref.WeakMethod(self._at_fork_reinit)
            os.register_at_fork(after_in_child=lambda: (method := reinit()) and method())

    def _at_fork_reinit(self) -> None:
        """In a forked child: fresh locks and a worker of its own; the parent's queue stays the
        parent's to export (the child would ship it twice)."""
        self._lock = threading.Lock()
        self._room = threading.Condition(self._lock)
        self._wake = threading.Event()
        self._flush_waiters = []
        self._queue.clear()
        self._in_flight = []
        self._wait_until = None
        self._everything = False
        if self._closing or self._abandoned:
            return
        self._worker = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._worker.start()

    @classmethod
    def sidecar(
        cls,
        export: Callable[[list[T]], bool],
        *,
        signal: Signal,
        health: TelemetryHealth,
        max_queue_size: int,
        max_export_batch_size: int,
        schedule_delay_s: float,
        name: str | None = None,
        signals_of: Callable[[T], Iterable[Signal]] | None = None,
    ) -> BoundedBatcher[T]:
        """A worker that stays off the GIL while a turn is busy (`defer_bursts`): it ships
        everything at the turn's end (`wake`) or at its delay once the queue stops filling
        fast; during a burst, only what the bound requires (the batches over `half_queue`).
        The telemetry sidecars (span building, the signal queue, log lines, deferred metrics)
        are made this way.

        Why: a worker that runs beside a busy turn costs the process far more CPU than the
        same work after it; every GIL hand-off between the two threads is a wake on the other
        CPU and a cold cache. Issue 17 measured a 3,000-call turn at ~+20 µs a call once the
        workers ran mid-turn, and the same turn pinned to one CPU at no extra cost. A queue
        that takes a whole batch within one delay is filled by a turn that is busy, not one
        waiting on a tool or a model, and its items can wait for the burst's end."""
        return cls(
            export,
            signal=signal,
            health=health,
            max_queue_size=max_queue_size,
            max_export_batch_size=max_export_batch_size,
            schedule_delay_s=schedule_delay_s,
            wake_at=half_queue(max_queue_size, max_export_batch_size),
            name=name,
            defer_bursts=True,
            signals_of=signals_of,
        )

    def emit(self, item: T) -> None:
        """Queue one item, or drop and count it. Never blocks (beyond a short lock) or raises."""
        ready = False
        queue = self._queue
        with self._lock:
            accepted = not self._closing and len(queue) < self._max_queue_size
            if accepted:
                queue.append(item)
                ready = len(queue) >= self._wake_at
        if not accepted:
            if self._signals_of is None:
                self._health.increment(HealthCounter.DROPPED, self._signal)
            else:
                self._count_lost((item,), HealthCounter.DROPPED)
            self._warn_dropped(self._label)
        elif ready:
            self._wake.set()

    def wake(self) -> None:
        """Ask the worker to export everything queued now, without waiting for it."""
        with self._lock:
            self._everything = True
        self._wake.set()

    def wait_for_room(self, count: int, timeout_s: float) -> bool:
        """Wait until `count` more items fit (at most `timeout_s`), waking the worker if it
        must make the room. For a producer that is itself a worker thread and may wait, so
        that a fast producer does not overrun a slower exporter; never call it on the turn's
        path. Returns at once once closing.

        Returns:
            True when there is room now.
        """
        limit = self._queue.maxlen - count  # type: ignore[operator]
        with self._room:
            if len(self._queue) <= limit or self._closing:
                return len(self._queue) <= limit
            self._wake.set()
            self._room.wait_for(lambda: len(self._queue) <= limit or self._closing, timeout_s)
            return len(self._queue) <= limit

    def force_flush(self, timeout_s: float) -> bool:
        """Ask the worker to export everything queued; wait at most `timeout_s`.

        Returns:
            True when the queue was drained in time.
        """
        done = threading.Event()
        deadline = time.monotonic() + max(timeout_s, 0.0)
        with self._lock:
            if self._closing:
                return False
            self._flush_waiters.append(done)
            if self._wait_until is None or deadline < self._wait_until:
                self._wait_until = deadline
        self._wake.set()
        return done.wait(max(timeout_s, 0.0)) and not self._abandoned

    def shutdown(self, timeout_s: float) -> bool:
        """Stop accepting items, export what is queued, and stop the worker, within `timeout_s`.

        Items still queued at the deadline are dropped and counted; a worker stuck in a slow
        export is abandoned (it is a daemon thread and stops after that export returns). While
        a flush is waiting, or after one missed its deadline, shutdown waits no later than that
        flush's deadline: exit pays for a stuck export once, not once per call.

        Returns:
            True when everything queued was handed to `export` before the deadline.
        """
        with self._lock:
            if self._closing:
                return not self._worker.is_alive()
            self._closing = True
            self._room.notify_all()
        self._wake.set()
        limit = max(timeout_s, 0.0)
        if self._wait_until is not None:
            limit = min(limit, max(self._wait_until - time.monotonic(), 0.0))
        self._worker.join(limit)
        finished = not self._worker.is_alive()
        with self._lock:
            self._abandoned = not finished
            lost = [*self._queue, *(self._in_flight if self._abandoned else ())]
            self._queue.clear()
            waiters, self._flush_waiters = self._flush_waiters, []
        for waiter in waiters:
            waiter.set()
        self._count_lost(lost, HealthCounter.DROPPED, HealthCounter.TIMED_OUT)
        return finished and not lost

    def _count_lost(self, items: Collection[T], *counters: HealthCounter) -> None:
        """Count `items` in each of `counters`, under `signal` or the signals of each item."""
        if not items:
            return
        if self._signals_of is None:
            tally: dict[Signal, int] = {self._signal: len(items)}
        else:
            tally = Counter(signal for item in items for signal in self._signals_of(item))
        for counter in counters:
            for signal, n in tally.items():
                self._health.increment(counter, signal, n)

    def _run(self) -> None:
        looked = 0  # the queue's length when the worker last looked and left it so
        while True:
            woken = self._wake.wait(self._delay)
            self._wake.clear()
            with self._lock:
                waiters, self._flush_waiters = self._flush_waiters, []
                closing = self._closing
                everything, self._everything = self._everything, False
                queued = len(self._queue)
            keep = 0
            if self._defer_bursts and not (waiters or closing or everything):
                if not woken and queued - looked >= self._batch_size:
                    looked = queued  # the delay ended mid-burst: look again one delay later
                    continue
                if woken:  # the mark: ship what is over it, the rest at the burst's end
                    keep = self._wake_at - 1
            looked = self._drain(keep)
            with self._lock:
                if not self._flush_waiters:
                    self._wait_until = None
            for waiter in waiters:
                waiter.set()
            if closing:
                return

    def _drain(self, keep: int = 0) -> int:
        """Ship batches until at most `keep` items are left queued; returns how many are."""
        while True:
            with self._lock:
                if self._abandoned or len(self._queue) <= keep:
                    return len(self._queue)
                count = min(self._batch_size, len(self._queue))
                batch = [self._queue.popleft() for _ in range(count)]
                self._in_flight = batch
                self._room.notify_all()
            self._ship(batch)

    def _ship(self, batch: list[T]) -> None:
        token = attach(set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))
        try:
            ok = self._export(batch)
        except Exception as exc:
            self._warn_failed(self._label, type(exc).__name__)
            ok = False
        finally:
            detach(token)
        with self._lock:
            self._in_flight = []
            if self._abandoned:
                return  # shutdown gave up on this export and counted its items already
        if not ok:
            self._count_lost(batch, HealthCounter.DROPPED)
            if self._signals_of is None:
                self._health.increment(HealthCounter.EXPORT_FAILURES, self._signal)
            else:
                for signal in {s for item in batch for s in self._signals_of(item)}:
                    self._health.increment(HealthCounter.EXPORT_FAILURES, signal)


def _validate(max_queue_size: int, max_export_batch_size: int, schedule_delay_s: float) -> None:
    if max_queue_size <= 0:
        raise ValueError(f"max_queue_size must be a positive integer, got {max_queue_size}")
    if max_export_batch_size <= 0:
        raise ValueError(
            f"max_export_batch_size must be a positive integer, got {max_export_batch_size}"
        )
    if max_export_batch_size > max_queue_size:
        raise ValueError(
            "max_export_batch_size must be less than or equal to max_queue_size, got "
            f"{max_export_batch_size} > {max_queue_size}"
        )
    if schedule_delay_s <= 0:
        raise ValueError(f"schedule_delay_s must be positive, got {schedule_delay_s}")


class BoundedBatchSpanProcessor(SpanProcessor):
    """Ships sampled ended spans through a `BoundedBatcher` to one exporter.

    `on_end` runs on the turn's path and only appends to the bounded queue; everything slow
    (the export guard, encoding, the network) happens on the worker thread. Install it last-hop:
    the exporter given here should already be wrapped in `RedactingSpanExporter`.

    Args:
        exporter: where spans go.
        health: where drops and failures are counted.
        max_queue_size: the bound (`OTEL_BSP_MAX_QUEUE_SIZE`).
        max_export_batch_size: spans per export (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`).
        schedule_delay_s: worker wake-up period (`OTEL_BSP_SCHEDULE_DELAY`, in seconds here).
        shutdown_timeout_s: the deadline of `shutdown`, which the SDK calls without one.

    Raises:
        ValueError: a size or delay breaks its rule; the message names the rule.
    """

    def __init__(
        self,
        exporter: SpanExporter,
        *,
        health: TelemetryHealth,
        max_queue_size: int = 2048,
        max_export_batch_size: int = 512,
        schedule_delay_s: float = 5.0,
        shutdown_timeout_s: float = 5.0,
    ) -> None:
        self.exporter = exporter
        self._shutdown_timeout_s = shutdown_timeout_s
        self._batcher: BoundedBatcher[ReadableSpan] = BoundedBatcher(
            self._export,
            signal=Signal.TRACES,
            health=health,
            max_queue_size=max_queue_size,
            max_export_batch_size=max_export_batch_size,
            schedule_delay_s=schedule_delay_s,
        )
        self._shut = False

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        return None

    def on_end(self, span: ReadableSpan) -> None:
        context = span.context
        if context is None or not context.trace_flags.sampled:
            return
        self._batcher.emit(span)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self._batcher.force_flush(timeout_millis / 1000)

    def wait_for_room(self, count: int, timeout_s: float) -> bool:
        """Wait until `count` more spans fit in the queue (`BoundedBatcher.wait_for_room`):
        for the span build worker, so it does not outrun this exporter."""
        return self._batcher.wait_for_room(count, timeout_s)

    def shutdown(self) -> None:
        """Drain within `shutdown_timeout_s`, then shut the exporter down (idempotent)."""
        if self._shut:
            return
        self._shut = True
        self._batcher.shutdown(self._shutdown_timeout_s)
        try:
            # Interrupts an OTLP exporter's retry back-off if the worker is still in it.
            self.exporter.shutdown()
        except Exception as exc:
            _log.warning(
                "span exporter %s failed to shut down: %s",
                type(self.exporter).__name__,
                type(exc).__name__,
            )

    def abandon(self) -> None:
        """Give up at once (a shutdown deadline passed): what is queued or in an unfinished
        export is counted as dropped and timed out now, not when a stuck export returns."""
        self._batcher.shutdown(0.0)

    def _export(self, batch: list[ReadableSpan]) -> bool:
        return self.exporter.export(batch) is SpanExportResult.SUCCESS
