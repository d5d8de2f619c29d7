"""The span export guard: the last redaction pass, and the bounded batching in front of it.

Two jobs sit on the export path of every span the runtime ships, ours or not:

- `RedactingSpanExporter` wraps any `SpanExporter`. Ended spans are read-only, so it follows one
  path: span → dict → the steps of `guard_steps` → a new span → the wrapped exporter; a span no
  step changed ships as it was. Spans from user code and other instrumentation share the
  provider, so they meet the same `Redactor`.
- `BoundedBatchSpanProcessor` decides *when* spans ship: `on_end` only appends to a bounded
  queue (never blocks, counts every drop in `TelemetryHealth`); one worker thread exports
  batches, catches exporter errors and counts them; shutdown and flush have deadlines. The
  queue-and-worker part, `BoundedBatcher`, knows nothing of spans, so every signal can use it.

Risky part: the guard must never let an unscrubbed span through. A step that fails on a span
drops that span (counted) rather than exporting it as it was.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Generic, Protocol, TypedDict, TypeVar

from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, Span, SpanProcessor
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status
from opentelemetry.util.types import AttributeValue

from .health import HealthCounter, Signal, TelemetryHealth

__all__ = [
    "AttributeScrubber",
    "BoundedBatchSpanProcessor",
    "BoundedBatcher",
    "CleanTextCache",
    "EventScrubber",
    "LinkScrubber",
    "NameScrubber",
    "RedactingSpanExporter",
    "SpanDict",
    "SpanStep",
    "StatusScrubber",
    "TextRedactor",
    "guard_steps",
    "span_from_dict",
    "span_to_dict",
]

_log = logging.getLogger(__name__)

T = TypeVar("T")

DROP_LOG_INTERVAL_S = 60.0
"""At most one drop warning per signal per minute: drop logging must not flood."""


class TextRedactor(Protocol):
    """What the guard needs of `zeroclaw_obs.redaction.Redactor`."""

    def redact_text(self, s: str) -> str:
        """Return `s` with every secret replaced by `[REDACTED:<rule_id>]`."""
        ...


class SpanDict(TypedDict):
    """An ended span as plain data: the `ReadableSpan` constructor's arguments, plus drop counts."""

    name: str
    context: SpanContext | None
    parent: SpanContext | None
    resource: Resource
    attributes: Mapping[str, AttributeValue]
    events: Sequence[Event]
    links: Sequence[Link]
    kind: SpanKind
    status: Status
    start_time: int | None
    end_time: int | None
    instrumentation_scope: InstrumentationScope | None
    dropped_attributes: int
    dropped_events: int
    dropped_links: int


SpanStep = Callable[[SpanDict], SpanDict]
"""One guard step: takes a span dict, returns it (changed in place or replaced).

A step replaces a field only when it changed something in it, and otherwise leaves the very
same object there: that is how the guard knows it may ship the original span."""

_NO_ATTRIBUTES: Mapping[str, AttributeValue] = MappingProxyType({})
_MISSING = object()


def span_to_dict(span: ReadableSpan) -> SpanDict:
    """Copy an ended span's fields into a `SpanDict` (the tuples inside are shared, not copied)."""
    return SpanDict(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=span.attributes or _NO_ATTRIBUTES,
        events=span.events,
        links=span.links,
        kind=span.kind,
        status=span.status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
        dropped_attributes=span.dropped_attributes,
        dropped_events=span.dropped_events,
        dropped_links=span.dropped_links,
    )


class _GuardedSpan(ReadableSpan):
    """A rebuilt span that keeps the original's drop counts (exported as `dropped*Count`)."""

    def __init__(self, data: SpanDict) -> None:
        super().__init__(
            name=data["name"],
            context=data["context"],
            parent=data["parent"],
            resource=data["resource"],
            attributes=data["attributes"],
            events=data["events"],
            links=data["links"],
            kind=data["kind"],
            status=data["status"],
            start_time=data["start_time"],
            end_time=data["end_time"],
            instrumentation_scope=data["instrumentation_scope"],
        )
        self._dropped = (data["dropped_attributes"], data["dropped_events"], data["dropped_links"])

    @property
    def dropped_attributes(self) -> int:
        return self._dropped[0]

    @property
    def dropped_events(self) -> int:
        return self._dropped[1]

    @property
    def dropped_links(self) -> int:
        return self._dropped[2]


def span_from_dict(data: SpanDict) -> ReadableSpan:
    """Build the read-only span an exporter receives from a (scrubbed) `SpanDict`."""
    return _GuardedSpan(data)


class CleanTextCache:
    """Remembers strings the redactor left unchanged, so each is scanned once.

    Span names, ids, tool names, models and outcomes repeat on every span and log line, and
    content can repeat (the same result on many spans, arguments on a span and on two log
    lines); without this each costs a full scan every time. Only strings that came out
    *unchanged* are kept, so no secret is ever held here; a string with a secret is scanned
    every time. The redactor is deterministic, so a remembered answer is the answer.

    Strings are kept in two generations: when the young one reaches a bound it becomes the
    old one and the previous old one is dropped, so a string stays known for at least one
    generation and one still in use is carried over. One instance may serve several surfaces
    and threads (the log processor on the turn's path, the span guard on the export thread):
    a string scanned by one is not scanned again by the other. Every operation is a single
    set or attribute operation, so it is safe under the GIL; a race can only forget a string.

    Args:
        redactor: the runtime's one `Redactor`.
        max_entries: strings per generation.
        max_length: longer strings are never remembered.
        max_chars: characters per generation.
    """

    def __init__(
        self,
        redactor: TextRedactor,
        *,
        max_entries: int = 4096,
        max_length: int = 16384,
        max_chars: int = 1 << 20,
    ) -> None:
        self._redact = redactor.redact_text
        self._young: set[str] = set()
        self._old: set[str] = set()
        self._chars = 0
        self._max_entries = max_entries
        self._max_length = max_length
        self._max_chars = max_chars

    def redact_text(self, s: str) -> str:
        """`redactor.redact_text(s)`, answered from memory when `s` is known to be clean."""
        if self.is_clean(s):
            return s
        redacted = self._redact(s)
        if redacted == s:
            self._remember(s)
        return redacted

    def is_clean(self, s: str) -> bool:
        """Whether `s` is remembered as a string the redactor leaves unchanged."""
        if s in self._young:
            return True
        if s in self._old:
            self._remember(s)  # still in use: carry it into the young generation
            return True
        return False

    def _remember(self, s: str) -> None:
        """Keep `s` as clean: only ever a string the redactor returned unchanged."""
        size = len(s)
        if size > self._max_length:
            return
        if len(self._young) >= self._max_entries or self._chars + size > self._max_chars:
            # The bound: two generations at most; new sets, never cleared in place, so a
            # reader on another thread always holds a whole one.
            self._old, self._young, self._chars = self._young, set(), 0
        self._young.add(s)
        self._chars += size


class _Scrubber:
    """Shared set-up of the steps: bind the redactor's `redact_text` once.

    The helpers return their argument itself when nothing in it changed, so a step can leave
    the field alone.
    """

    def __init__(self, redactor: TextRedactor) -> None:
        self._redact = redactor.redact_text

    def _text(self, text: str) -> str:
        redacted = self._redact(text)
        return text if redacted == text else redacted

    def _value(self, value: AttributeValue) -> AttributeValue:
        if isinstance(value, str):
            return self._text(value)
        if isinstance(value, tuple):
            items = tuple(self._text(v) if isinstance(v, str) else v for v in value)
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        if isinstance(value, list):
            return tuple(self._text(v) if isinstance(v, str) else v for v in value)
        return value

    def _attributes(
        self, attributes: Mapping[str, AttributeValue] | None
    ) -> Mapping[str, AttributeValue] | None:
        if not attributes:
            return attributes
        scrubbed: dict[str, AttributeValue] | None = None
        for key, value in attributes.items():
            redacted = self._value(value)
            if redacted is not value:
                if scrubbed is None:
                    scrubbed = dict(attributes)
                scrubbed[key] = redacted
        return attributes if scrubbed is None else scrubbed


class NameScrubber(_Scrubber):
    """Redacts the span name.

    Names normally come from code, but ours embed the tool name the model chose
    (`execute_tool {tool}`), and a model can be talked into choosing anything. Scrubbing a clean
    name costs one scan (one lookup once cached) and changes nothing. Position in the chain
    does not matter.
    """

    def __call__(self, span: SpanDict) -> SpanDict:
        span["name"] = self._text(span["name"])
        return span


class AttributeScrubber(_Scrubber):
    """Redacts every string attribute and every string item of a sequence attribute.

    Keys are kept (they name fields, and backends index them); non-string values pass through.
    Resource attributes are not touched: they come from the operator's configuration.
    """

    def __call__(self, span: SpanDict) -> SpanDict:
        span["attributes"] = self._attributes(span["attributes"])
        return span


class EventScrubber(_Scrubber):
    """Redacts each span event's name and attributes (`exception.message`, `…stacktrace`, …).

    An event that needed no change is kept as it was; the others are rebuilt.
    """

    def __call__(self, span: SpanDict) -> SpanDict:
        events = span["events"]
        scrubbed = tuple(self._event(e) for e in events)
        if any(a is not b for a, b in zip(scrubbed, events, strict=True)):
            span["events"] = scrubbed
        return span

    def _event(self, event: Event) -> Event:
        name, attributes = self._text(event.name), self._attributes(event.attributes)
        if name is event.name and attributes is event.attributes:
            return event
        return Event(name, attributes, event.timestamp)


class LinkScrubber(_Scrubber):
    """Redacts the attributes of each span link; the linked context is kept."""

    def __call__(self, span: SpanDict) -> SpanDict:
        links = span["links"]
        scrubbed = tuple(self._link(k) for k in links)
        if any(a is not b for a, b in zip(scrubbed, links, strict=True)):
            span["links"] = scrubbed
        return span

    def _link(self, link: Link) -> Link:
        attributes = self._attributes(link.attributes)
        return link if attributes is link.attributes else Link(link.context, attributes)


class StatusScrubber(_Scrubber):
    """Redacts the status description, where `record_exception` callers put error messages."""

    def __call__(self, span: SpanDict) -> SpanDict:
        status = span["status"]
        if status.description:
            description = self._text(status.description)
            if description is not status.description:
                span["status"] = Status(status.status_code, description)
        return span


def guard_steps(redactor: TextRedactor) -> list[SpanStep]:
    """The default chain: name, attributes, events, links, status description.

    Each step scrubs a disjoint part of the span, so their order does not change the result.
    The steps share one `CleanTextCache` in front of the redactor (the one given, if it is
    already a cache shared with other surfaces).
    """
    if not isinstance(redactor, CleanTextCache):
        redactor = CleanTextCache(redactor)
    return [
        NameScrubber(redactor),
        AttributeScrubber(redactor),
        EventScrubber(redactor),
        LinkScrubber(redactor),
        StatusScrubber(redactor),
    ]


class RedactingSpanExporter(SpanExporter):
    """Wraps any exporter; every span it forwards went through the guard's steps first.

    Runs on the exporting thread (the batch worker), off the turn's path. `export` never raises:
    a span whose scrubbing fails is dropped (counted when `health` is given), and an inner
    exporter that raises reads as `FAILURE`.

    Args:
        inner: the exporter that ships the scrubbed spans.
        redactor: the runtime's one `Redactor`.
        steps: the chain; `guard_steps(redactor)` when None.
        health: where dropped spans are counted.
    """

    def __init__(
        self,
        inner: SpanExporter,
        redactor: TextRedactor,
        *,
        steps: Sequence[SpanStep] | None = None,
        health: TelemetryHealth | None = None,
    ) -> None:
        self.inner = inner
        self._steps = tuple(steps if steps is not None else guard_steps(redactor))
        self._health = health

    def guard(self, span: ReadableSpan) -> ReadableSpan:
        """One span through the chain (a bare loop over the steps).

        When no step replaced a field, the original span is what ships: rebuilding it would
        copy every field into an equal span.
        """
        data = span_to_dict(span)
        before = dict(data)
        for step in self._steps:
            data = step(data)
        if len(data) == len(before) and all(
            data.get(key, _MISSING) is value for key, value in before.items()
        ):
            return span
        return span_from_dict(data)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        guarded = []
        for span in spans:
            try:
                guarded.append(self.guard(span))
            except Exception as exc:
                # The type only, here and below: a message could quote what was being scrubbed.
                _log.warning("export guard failed on a span (%s); dropped", type(exc).__name__)
                if self._health is not None:
                    self._health.increment(HealthCounter.DROPPED, Signal.TRACES)
        if not guarded:
            return SpanExportResult.SUCCESS
        try:
            return self.inner.export(guarded)
        except Exception as exc:
            _log.warning(
                "span exporter %s raised %s", type(self.inner).__name__, type(exc).__name__
            )
            return SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


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
    counted. The worker wakes every `schedule_delay_s`, or early once a batch is ready, and
    hands batches to `export`; a batch whose export returns False or raises is counted as one
    export failure and its items as dropped (there is no retry here; exporters retry within
    their own timeout). `force_flush` and `shutdown` wait at most their timeout.

    Args:
        export: ships one batch; returns True on success. Called only from the worker thread.
        signal: the `signal` label of the counts.
        health: where drops and failures are counted.
        max_queue_size: the bound; items beyond it are dropped.
        max_export_batch_size: the most items per `export` call.
        schedule_delay_s: the longest an item waits before the worker looks at the queue.

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
    ) -> None:
        _validate(max_queue_size, max_export_batch_size, schedule_delay_s)
        self._export = export
        self._signal = signal
        self._health = health
        self._queue: deque[T] = deque(maxlen=max_queue_size)  # the bound
        self._batch_size = max_export_batch_size
        self._delay = schedule_delay_s
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._flush_waiters: list[threading.Event] = []
        self._closing = False
        self._abandoned = False
        self._wait_until: float | None = None
        """The earliest deadline a caller is (or was) waiting on the worker for, until the worker
        next finishes a drain; shutdown never waits past it (exit pays for a stuck export once)."""
        self._warn_dropped = _RateLimitedWarning(
            "%s queue full or closed: dropping (counted in zeroclaw_telemetry_dropped_total)"
        )
        self._warn_failed = _RateLimitedWarning("%s export raised %s: batch dropped (counted)")
        self._worker = threading.Thread(
            target=self._run, name=f"zeroclaw-{signal.value}-export", daemon=True
        )
        self._worker.start()

    def emit(self, item: T) -> None:
        """Queue one item, or drop and count it. Never blocks (beyond a short lock) or raises."""
        ready = False
        with self._lock:
            accepted = not self._closing and len(self._queue) < self._queue.maxlen  # type: ignore[operator]
            if accepted:
                self._queue.append(item)
                ready = len(self._queue) >= self._batch_size
        if not accepted:
            self._health.increment(HealthCounter.DROPPED, self._signal)
            self._warn_dropped(self._signal.value)
        elif ready:
            self._wake.set()

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
        self._wake.set()
        limit = max(timeout_s, 0.0)
        if self._wait_until is not None:
            limit = min(limit, max(self._wait_until - time.monotonic(), 0.0))
        self._worker.join(limit)
        finished = not self._worker.is_alive()
        with self._lock:
            self._abandoned = not finished
            left = len(self._queue)
            self._queue.clear()
            waiters, self._flush_waiters = self._flush_waiters, []
        for waiter in waiters:
            waiter.set()
        self._health.increment(HealthCounter.DROPPED, self._signal, left)
        return finished and left == 0

    def _run(self) -> None:
        while True:
            self._wake.wait(self._delay)
            self._wake.clear()
            with self._lock:
                waiters, self._flush_waiters = self._flush_waiters, []
                closing = self._closing
            self._drain()
            with self._lock:
                if not self._flush_waiters:
                    self._wait_until = None
            for waiter in waiters:
                waiter.set()
            if closing:
                return

    def _drain(self) -> None:
        while True:
            with self._lock:
                if self._abandoned or not self._queue:
                    return
                count = min(self._batch_size, len(self._queue))
                batch = [self._queue.popleft() for _ in range(count)]
            self._ship(batch)

    def _ship(self, batch: list[T]) -> None:
        try:
            ok = self._export(batch)
        except Exception as exc:
            self._warn_failed(self._signal.value, type(exc).__name__)
            ok = False
        if not ok:
            self._health.increment(HealthCounter.EXPORT_FAILURES, self._signal)
            self._health.increment(HealthCounter.DROPPED, self._signal, len(batch))


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

    def _export(self, batch: list[ReadableSpan]) -> bool:
        return self.exporter.export(batch) is SpanExportResult.SUCCESS
