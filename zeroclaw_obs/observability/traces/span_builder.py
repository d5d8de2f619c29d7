"""The build worker: the turn's recorded spans become ended spans for the provider's processors.

`SpanBuilder` owns the bounded queue between the turn's path and the provider (`PendingSpan`s
and `RootEnd`s, drained by one worker thread: see `deferred_spans.py` for the two-queue path).
Each record reaches the processors one of two ways:

- through the SDK: `PendingSpan.build` starts an SDK span with the record's ids and times,
  replays its operations and ends it (~30 µs a tool span: sampler, attribute cleaning, locks,
  every processor's `on_start`, `_on_ending` and `on_end`);
- directly (`DirectBuild`): the `ReadableSpan` the SDK would have handed `on_end`, built from the
  record (`DirectBuild.readable`, replaying its operations on a `DirectSpan`: a few µs), given
  to the provider's processors' `on_end`.

The direct way is taken only where it cannot change what a processor sees: the provider's
tracer is the SDK's and enabled, with its internal span metrics off; its sampler is one of the
SDK's own (for those a child of a sampled local root is sampled, with the root's trace state
and no added attributes, and an unsampled root records no children); every processor is a
`BoundedBatchSpanProcessor`, whose `on_start` does nothing; and the record holds nothing the
SDK would clean, bound or format (`DirectSpan` refuses it). A processor a user adds to the
provider (it then sees `on_start`) switches every later batch to the SDK way, as does any
other sampler; resource, scope and span limits are always the provider's.

Risky part: that equivalence, which the tests hold: the same records through both ways give
the same encoded spans.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import (
    Event,
    ReadableSpan,
    SpanLimits,
    SynchronousMultiSpanProcessor,
    sampling,
)
from opentelemetry.sdk.util.instrumentation import InstrumentationInfo, InstrumentationScope
from opentelemetry.trace import SpanContext, Status, StatusCode

from ..batching import BoundedBatcher, BoundedBatchSpanProcessor
from ..health import Signal, TelemetryHealth
from .deferred_spans import PendingSpan, RootEnd, RuntimeSpan
from .span_ids import SpanIdHandoff

__all__ = ["DirectBuild", "DirectSpan", "SpanBuilder"]


_SDK_SAMPLERS = (sampling.ALWAYS_ON, sampling.ALWAYS_OFF, sampling.DEFAULT_ON, sampling.DEFAULT_OFF)
_SDK_RATIO_SAMPLERS = (sampling.TraceIdRatioBased, sampling.ParentBasedTraceIdRatio)


_PLAIN = frozenset({str, bool, int, float})
_UNSET = Status(StatusCode.UNSET)
"""The status a span starts with (a `Status` never changes: one serves every span)."""
_REFUSED = object()


class DirectSpan:
    """A span being replayed without the SDK: what `_Span` would hold, for the plain case.

    It follows the SDK's `_Span` step for step (a key set again moves to the end, as in
    `BoundedAttributes`; strings are cut at the limit; an OK status is final, UNSET is
    ignored) and refuses (False) whatever the SDK would clean, drop or count: a key that is
    empty or not a `str`, a value that is not a `str`, `bool`, `int`, `float` or a list or
    tuple of those, an attribute or event beyond its limit. A refused record is built by the
    SDK instead, so what reaches a processor is what the SDK would have built.
    """

    __slots__ = ("attributes", "events", "limits", "name", "status")

    def __init__(self, name: str, limits: SpanLimits) -> None:
        self.name = name
        self.limits = limits
        self.attributes: dict[str, Any] = {}
        self.events: list[Event] = []
        self.status = _UNSET

    def set_all(self, attributes: Mapping[str, Any]) -> bool:
        limits = self.limits
        current = self.attributes
        if (
            limits.max_span_attribute_length is None
            and (
                limits.max_span_attributes is None
                or len(current) + len(attributes) <= limits.max_span_attributes
            )
            and current.keys().isdisjoint(attributes)
        ):
            # The common sets (the first one, the engine's closing one): every key new, so
            # each lands at the end in order, as `set` one by one would put it; copied whole
            # once every value is plain.
            for key, value in attributes.items():
                if type(value) not in _PLAIN or type(key) is not str or not key:
                    break
            else:
                if current:
                    current.update(attributes)
                else:
                    self.attributes = dict(attributes)
                return True
        return all(self.set(key, value) for key, value in attributes.items())

    def set(self, key: str, value: Any) -> bool:
        value = _clean(value, self.limits.max_span_attribute_length)
        if value is _REFUSED or type(key) is not str or not key:
            return False
        attributes = self.attributes
        if key in attributes:
            del attributes[key]
        elif (limit := self.limits.max_span_attributes) is not None and len(attributes) >= limit:
            return False
        attributes[key] = value
        return True

    def add_event(self, name: str, attributes: Mapping[str, Any] | None, timestamp: int) -> bool:
        limits = self.limits
        if limits.max_events is not None and len(self.events) >= limits.max_events:
            return False
        cleaned: dict[str, Any] = {}
        for key, value in (attributes or {}).items():
            value = _clean(value, limits.max_attribute_length)
            if value is _REFUSED or type(key) is not str or not key:
                return False
            cleaned[key] = value
        if limits.max_event_attributes is not None and len(cleaned) > limits.max_event_attributes:
            return False
        self.events.append(Event(name, MappingProxyType(cleaned), timestamp))
        return True

    def set_status(self, status: Status | StatusCode, description: str | None) -> bool:
        if self.status.status_code is StatusCode.OK:
            return True
        if isinstance(status, Status):
            if status.status_code is not StatusCode.UNSET:
                self.status = status
        elif isinstance(status, StatusCode) and status is not StatusCode.UNSET:
            self.status = Status(status, description)
        return True


def _clean(value: Any, max_length: int | None) -> Any:
    """The value as the SDK's `_clean_attribute_value` leaves it, or `_REFUSED`."""
    kind = type(value)
    if kind is str:
        return value if max_length is None or len(value) <= max_length else value[:max_length]
    if kind in _PLAIN:
        return value
    if kind is tuple or kind is list:
        items = tuple(_clean(item, max_length) for item in value)
        if any(item is _REFUSED or type(item) is tuple for item in items):
            return _REFUSED
        return items
    return _REFUSED


@dataclass(slots=True)
class DirectBuild:
    """What a span built without the SDK takes from the provider, and who gets it (one per
    batch: `probe`)."""

    on_end: Callable[[ReadableSpan], None]
    resource: Resource
    scope: InstrumentationScope | None
    info: InstrumentationInfo | None
    limits: SpanLimits
    _last_parent: object = None
    _last_parent_span: SpanContext | None = None

    @classmethod
    def probe(cls, tracer: trace.Tracer, handoff: SpanIdHandoff | None) -> DirectBuild | None:
        """The direct way for `tracer` as it is now, or None when only the SDK may build.

        Read per batch: a processor added meanwhile is seen at the next batch.
        """
        if handoff is None:
            return None  # the SDK picks the span ids: the records do not know them
        try:
            from opentelemetry.sdk.trace._tracer_metrics import NoOpTracerMetrics

            multi = tracer.span_processor  # type: ignore[attr-defined]
            sampler = tracer.sampler  # type: ignore[attr-defined]
            if (
                not tracer._is_enabled()  # type: ignore[attr-defined]
                or not isinstance(tracer._tracer_metrics, NoOpTracerMetrics)  # type: ignore[attr-defined]
                or type(multi) is not SynchronousMultiSpanProcessor
                or not all(type(p) is BoundedBatchSpanProcessor for p in multi._span_processors)
                or not (
                    any(sampler is s for s in _SDK_SAMPLERS) or type(sampler) in _SDK_RATIO_SAMPLERS
                )
            ):
                return None
            return cls(
                on_end=multi.on_end,
                resource=tracer.resource,  # type: ignore[attr-defined]
                scope=tracer._instrumentation_scope,  # type: ignore[attr-defined]
                info=tracer.instrumentation_info,  # type: ignore[attr-defined]
                limits=tracer._span_limits,  # type: ignore[attr-defined]
            )
        except AttributeError:
            return None  # not the SDK's tracer, or another SDK version: the SDK way

    def readable(self, record: PendingSpan) -> ReadableSpan | None:
        """The ended span the SDK would hand `on_end` for `record`, built without the SDK;
        None when the record holds something only the SDK may decide (`DirectSpan` refuses)."""
        span = DirectSpan(record.name, self.limits)
        if not span.set_all(record.start_attributes()):
            return None
        for op in record.ops:
            if not op.replay(span):
                return None
        parent = self._last_parent_span
        if parent is None or record.parent is not self._last_parent:
            # A turn's children share their parent context: its span read once in a row.
            parent = trace.get_current_span(record.parent).get_span_context()
            self._last_parent, self._last_parent_span = record.parent, parent
        clean_texts = record.clean_texts
        ended = (RuntimeSpan if clean_texts else ReadableSpan)(
            name=span.name,
            context=record.context,
            parent=parent if parent.is_valid else None,
            resource=self.resource,
            attributes=span.attributes,
            events=tuple(span.events),
            kind=record.kind,
            instrumentation_info=self.info,
            status=span.status,
            start_time=record.start_ns,
            end_time=record.end_ns,
            instrumentation_scope=self.scope,
        )
        if clean_texts:
            ended.clean_texts = clean_texts  # type: ignore[attr-defined]
        return ended


class SpanBuilder:
    """The queue of recorded spans and the worker that builds them; never blocks the turn.

    Args:
        tracer: our tracer on the provider.
        handoff: the tracer's `SpanIdHandoff` (None: the SDK picks ids, always the SDK way).
        failed: called with the exception and the record's type when a record cannot be
            built (that span is lost, counted by the caller); never raises.
        health: where a full queue is counted (`dropped`).
        max_queue_size: records waiting; more are dropped and counted.
        schedule_delay_s: the longest a record waits while no turn ends.
        direct: take the direct way where it is equivalent (False: always the SDK's; tests
            compare the two).

    Raises:
        ValueError: a bound is not a positive integer; the message names it.
    """

    def __init__(
        self,
        tracer: trace.Tracer,
        handoff: SpanIdHandoff | None,
        *,
        failed: Callable[[Exception, str], None],
        health: TelemetryHealth,
        max_queue_size: int,
        schedule_delay_s: float,
        direct: bool = True,
    ) -> None:
        self._tracer = tracer
        self._handoff = handoff
        self._failed = failed
        self._direct = direct
        batch = min(512, max_queue_size)
        self._queue: BoundedBatcher[PendingSpan | RootEnd] = BoundedBatcher.sidecar(
            self._build,
            signal=Signal.TRACES,
            health=health,
            max_queue_size=max_queue_size,
            max_export_batch_size=batch,
            schedule_delay_s=schedule_delay_s,
            name="traces-build",
        )

    def emit(self, record: PendingSpan | RootEnd) -> None:
        """Queue a closed record (or drop and count it). Never blocks or raises."""
        self._queue.emit(record)

    def wake(self) -> None:
        """Build what is queued now (a turn ended)."""
        self._queue.wake()

    def force_flush(self, timeout_s: float) -> bool:
        """Build everything queued; wait at most `timeout_s`. True when done in time."""
        return self._queue.force_flush(timeout_s)

    def shutdown(self, timeout_s: float) -> bool:
        """Build what is queued and stop the worker within `timeout_s`; the rest is counted."""
        return self._queue.shutdown(timeout_s)

    def _build(self, batch: list[PendingSpan | RootEnd]) -> bool:
        """The worker: each record becomes an ended span (a failure costs that span).

        Every `ROOM_CHUNK` records it waits (at most `ROOM_WAIT_S`) for that much room in each
        of the provider's `BoundedBatchSpanProcessor` queues: built directly, spans come out
        several times faster than an exporter guards and encodes them, and would otherwise
        overrun its queue in a long turn. While it waits, its own queue takes the turn's
        records (and counts what it must drop), so the turn never waits.
        """
        direct = DirectBuild.probe(self._tracer, self._handoff) if self._direct else None
        ours = _batch_processors(self._tracer)
        for n, record in enumerate(batch):
            if n % ROOM_CHUNK == 0:
                for processor in ours:
                    processor.wait_for_room(ROOM_CHUNK, ROOM_WAIT_S)
            try:
                span = None
                if direct is not None and isinstance(record, PendingSpan):
                    span = direct.readable(record)
                if span is None:
                    record.build(self._tracer, self._handoff)
                else:
                    direct.on_end(span)  # type: ignore[union-attr]
            except Exception as exc:
                self._failed(exc, type(record).__name__)
        return True


ROOM_CHUNK = 64
"""Records built between two checks for room in the export queues."""
ROOM_WAIT_S = 1.0
"""The longest the build worker waits for an export queue to make room (a stuck exporter
then drops and counts, as before)."""


def _batch_processors(tracer: trace.Tracer) -> tuple[BoundedBatchSpanProcessor, ...]:
    """The provider's `BoundedBatchSpanProcessor`s (none when it is not the SDK's)."""
    processors = getattr(getattr(tracer, "span_processor", None), "_span_processors", ())
    return tuple(p for p in processors if isinstance(p, BoundedBatchSpanProcessor))
