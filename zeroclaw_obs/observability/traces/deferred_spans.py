"""Deferred spans: recorded on the turn's path, built into ended spans on a worker.

Building an SDK span (sampler, attribute validation, locks, the processors' `on_start` and
`on_end`) costs ~30 µs; a tool call has one, and the turn waited for it. Here the turn's path
only records what the span will be — its name, ids, times, attributes and the operations done
on it — in a `PendingSpan`, and one worker thread (`span_builder.SpanBuilder`) turns that record
into the ended span the provider's processors get: by replaying it on a real SDK span, with the
same ids, times and attributes, through the provider's own tracer, sampler, limits and
processors (`PendingSpan.build`), or, where that cannot differ, by building the `ReadableSpan`
the SDK would have built straight from the record (`span_builder.DirectBuild`, ~5x cheaper).
What reaches an exporter is what the SDK would have built.

Ids are known on the path: the span id comes from the provider's own `IdGenerator`, and
`SpanIdHandoff` (`span_ids.py`), installed once on our tracer, hands that id to the SDK when the
worker starts the span. So exemplars, log lines and spans a tool's code starts (they see the
`PendingSpan` as the current span, `CurrentSpan`) point at the span that will be exported.

A span's way out, through two bounded queues (each drops and counts when full, never blocks
the turn):

    turn's path (event loop)         build worker                    export worker
    ------------------------         ------------                    -------------
    observer event                   SpanBuilder: the record         BoundedBatchSpanProcessor
      -> PendingSpan (ids, times,      replayed on an SDK span         -> RedactingSpanExporter
         attributes, operations)       (provider's tracer, sampler,       (export guard)
      -> close(end, closing ops)       limits, processors), or            -> OTLP protobuf (our
      -> BoundedBatcher "traces-build"  built directly                    encoder) / OTLP-JSON
         (wakes at turn end, every     -> on_end -> export queue          / console exporter
          second, at half full)        (`OTEL_BSP_*` sizes)

Risky parts:
- The handoff is per thread and consumed by the next `generate_span_id` on that thread: the
  worker sets it right before `start_span` (which asks for the id before any processor runs)
  and withdraws it right after, in case a disabled tracer never asked.
- A `PendingSpan` is written on the event loop's thread (the engine, tool code) and read on
  the worker only after it was closed and queued; operations after the close are ignored, as
  the SDK ignores them on an ended span.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import Span, SpanContext, SpanKind, Status, StatusCode
from opentelemetry.util.types import Attributes, AttributeValue

from .span_ids import SpanIdHandoff, child_context

if TYPE_CHECKING:
    from .span_builder import DirectSpan

__all__ = [
    "MAX_OPERATIONS",
    "AddEvent",
    "AddLink",
    "CurrentSpan",
    "Deferred",
    "KnownClean",
    "Operation",
    "PendingSpan",
    "RecordException",
    "RootEnd",
    "RuntimeSpan",
    "SetAttribute",
    "SetAttributes",
    "SetStatus",
    "UpdateName",
    "known_clean",
]

MAX_OPERATIONS = 1024
"""Operations a tool's code may record on one pending span; later ones are ignored (the SDK
keeps 128 attributes and 128 events by default anyway)."""


@dataclass(frozen=True, slots=True)
class SetAttributes:
    """`span.set_attributes(attributes)`."""

    attributes: Mapping[str, Any]

    def apply(self, span: trace.Span) -> None:
        span.set_attributes(self.attributes)

    def replay(self, span: DirectSpan) -> bool:
        return span.set_all(self.attributes)


@dataclass(slots=True)
class Deferred:
    """Operations made on the build worker, not on the turn's path: `make(source)` returns
    them (the engine's closing attributes, status and events of a call, from its read-only event).
    `make` must be a pure function of `source`: it may be called twice (a replay the direct
    way refuses is applied the SDK way).

    Not frozen, unlike the other operations: one is made on every tool call's path, and a
    frozen dataclass's `__init__` costs ~3x; nothing sets its fields after it is made.
    """

    make: Callable[[Any], Sequence[Operation]]
    source: Any

    def apply(self, span: trace.Span) -> None:
        for op in self.make(self.source):
            op.apply(span)

    def replay(self, span: DirectSpan) -> bool:
        return all(op.replay(span) for op in self.make(self.source))


@dataclass(frozen=True, slots=True)
class SetAttribute:
    """`span.set_attribute(key, value)`."""

    key: str
    value: Any

    def apply(self, span: trace.Span) -> None:
        span.set_attribute(self.key, self.value)

    def replay(self, span: DirectSpan) -> bool:
        return span.set(self.key, self.value)


@dataclass(frozen=True, slots=True)
class AddEvent:
    """`span.add_event(name, attributes, timestamp)`."""

    name: str
    attributes: Mapping[str, Any] | None
    timestamp: int

    def apply(self, span: trace.Span) -> None:
        span.add_event(self.name, self.attributes, self.timestamp)

    def replay(self, span: DirectSpan) -> bool:
        return span.add_event(self.name, self.attributes, self.timestamp)


@dataclass(frozen=True, slots=True)
class AddLink:
    """`span.add_link(context, attributes)`."""

    context: SpanContext
    attributes: Mapping[str, Any] | None

    def apply(self, span: trace.Span) -> None:
        span.add_link(self.context, self.attributes)

    def replay(self, span: DirectSpan) -> bool:
        return False  # links are validated and bounded by the SDK: rare, left to it


@dataclass(frozen=True, slots=True)
class UpdateName:
    """`span.update_name(name)`."""

    name: str

    def apply(self, span: trace.Span) -> None:
        span.update_name(self.name)

    def replay(self, span: DirectSpan) -> bool:
        span.name = self.name
        return True


@dataclass(frozen=True, slots=True)
class SetStatus:
    """`span.set_status(status, description)`."""

    status: Status | StatusCode
    description: str | None = None

    def apply(self, span: trace.Span) -> None:
        span.set_status(self.status, self.description)

    def replay(self, span: DirectSpan) -> bool:
        return span.set_status(self.status, self.description)


@dataclass(frozen=True, slots=True)
class RecordException:
    """`span.record_exception(exception, attributes, timestamp, escaped)`."""

    exception: BaseException
    attributes: Mapping[str, Any] | None
    timestamp: int
    escaped: bool

    def apply(self, span: trace.Span) -> None:
        span.record_exception(self.exception, self.attributes, self.timestamp, self.escaped)

    def replay(self, span: DirectSpan) -> bool:
        return False  # the SDK formats the exception: rare, left to it


Operation = (
    SetAttributes
    | SetAttribute
    | AddEvent
    | AddLink
    | UpdateName
    | SetStatus
    | RecordException
    | Deferred
)
"""One `trace.Span` call recorded on a pending span and replayed (`apply`) on the SDK span:
the tool code's calls while the span is open, then the engine's closing ones. `replay` does
the same on a `span_builder.DirectSpan`, or says (False) that only the SDK can."""


def _frozen(value: Any) -> Any:
    # The SDK copies sequences when it sets them; a pending span must too, before the caller
    # can change the list it passed.
    return tuple(value) if isinstance(value, list) else value


class PendingSpan(Span):
    """A child span as recorded on the turn's path; `build` makes it a real SDK span.

    It is also a `trace.Span`: inside a tool's scope it is the current span, so a span the
    tool's code starts has it as parent, and attributes, events, links, a status or an
    exception the code records on it are replayed on the SDK span in order, before the
    engine's own closing attributes (which win on a shared key, as they would live).
    `end` from outside is ignored: the engine's closing event ends the span.

    Args:
        name: the span name.
        context: its ids (the trace's, and a span id from the provider's generator).
        parent: the context it is started in (the turn's root span).
        kind: the span kind.
        start_ns: its real start.
        attributes: the attributes it starts with (kept, not copied: pass a new dict), or a
            function that makes them on the build worker (`start_attributes`).
    """

    __slots__ = (
        "_open",
        "attributes",
        "clean_texts",
        "context",
        "end_ns",
        "kind",
        "name",
        "ops",
        "parent",
        "start_ns",
    )

    def __init__(
        self,
        name: str,
        context: SpanContext,
        parent: otel_context.Context,
        kind: SpanKind,
        start_ns: int,
        attributes: dict[str, Any] | Callable[[], dict[str, Any]],
    ) -> None:
        self.name = name
        self.context = context
        self.parent = parent
        self.kind = kind
        self.start_ns = start_ns
        self.attributes = attributes
        self.ops: list[Operation] = []
        self.end_ns: int | None = None
        self._open = True
        self.clean_texts: tuple[str, ...] = ()
        """Texts the span carries that were known clean when the turn recorded them (a call's
        id, the engine's redacted arguments and result): see `RuntimeSpan`."""

    @classmethod
    def child_of(
        cls,
        root: Span,
        parent: otel_context.Context,
        handoff: SpanIdHandoff | None,
        name: str,
        kind: SpanKind,
        start_ns: int,
        attributes: dict[str, Any] | Callable[[], dict[str, Any]],
    ) -> PendingSpan:
        """A pending child of `root` (`parent` is the context holding it), with a span id from
        the provider's generator, and the trace state and flags the SDK's samplers give a
        sampled child.

        Without a handoff (a tracer that is not the SDK's) the worker's tracer picks the id, so
        the pending span carries the root's context: a tool's own spans then nest under the
        root, and the call has no ids of its own.
        """
        context = root.get_span_context()
        if handoff is not None:
            context = child_context(context, handoff.inner.generate_span_id())
        return cls(name, context, parent, kind, start_ns, attributes)

    def start_attributes(self) -> dict[str, Any]:
        """The attributes it starts with, made now if they were deferred (build worker)."""
        attributes = self.attributes
        if callable(attributes):
            attributes = self.attributes = attributes()
        return attributes

    def close(self, end_ns: int, *ops: Operation) -> PendingSpan:
        """Stop recording outside operations, add the engine's closing ones, set the end."""
        self._open = False
        self.ops.extend(ops)
        self.end_ns = end_ns
        return self

    def build(self, tracer: trace.Tracer, handoff: SpanIdHandoff | None) -> None:
        """Start the SDK span with this record's ids and times, replay, and end it."""
        if handoff is not None:
            handoff.give(self.context.span_id)
        span = tracer.start_span(
            self.name,
            context=self.parent,
            kind=self.kind,
            attributes=self.start_attributes(),
            start_time=self.start_ns,
        )
        if handoff is not None:
            handoff.give(None)  # unused when the tracer is disabled: never leave it for another
        for op in self.ops:
            op.apply(span)
        span.end(end_time=self.end_ns)

    # -- trace.Span, for the code of the tool that runs inside this span -------------------

    def get_span_context(self) -> SpanContext:
        return self.context

    def is_recording(self) -> bool:
        return self._open

    def set_attributes(self, attributes: Mapping[str, AttributeValue]) -> None:
        self._record(SetAttributes({k: _frozen(v) for k, v in attributes.items()}))

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        self._record(SetAttribute(key, _frozen(value)))

    def add_event(
        self, name: str, attributes: Attributes = None, timestamp: int | None = None
    ) -> None:
        copied = dict(attributes) if attributes else None
        self._record(AddEvent(name, copied, timestamp or time.time_ns()))

    def add_link(self, context: SpanContext, attributes: Attributes = None) -> None:
        self._record(AddLink(context, dict(attributes) if attributes else None))

    def update_name(self, name: str) -> None:
        self._record(UpdateName(name))

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        self._record(SetStatus(status, description))

    def record_exception(
        self,
        exception: BaseException,
        attributes: Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        copied = dict(attributes) if attributes else None
        self._record(RecordException(exception, copied, timestamp or time.time_ns(), escaped))

    def end(self, end_time: int | None = None) -> None:
        """Ignored: the span belongs to the engine, whose closing event ends it."""

    def _record(self, op: Operation) -> None:
        if self._open and len(self.ops) < MAX_OPERATIONS:
            self.ops.append(op)


class CurrentSpan:
    """`span` as the current span while the block runs: `trace.use_span` without its
    exception handling (the engine's closing event records the outcome) and without its
    generator (~1 µs instead of ~3.5 on every tool call).

    Enter it once, in the task that runs the call; it restores the context it found.
    """

    __slots__ = ("_span", "_token")

    def __init__(self, span: Span) -> None:
        self._span = span
        self._token: object | None = None

    def __enter__(self) -> Span:
        self._token = otel_context.attach(trace.set_span_in_context(self._span))
        return self._span

    def __exit__(self, *exc: object) -> None:
        otel_context.detach(self._token)  # type: ignore[arg-type]


class RootEnd:
    """The end of a turn's root span, queued behind its children so they are built first.

    The root itself is a live SDK span (started on the path: its sampling decision and ids
    are needed there); only its closing attributes, status and end wait in the queue.
    """

    __slots__ = ("attributes", "end_ns", "root", "status")

    def __init__(
        self, root: Span, end_ns: int, attributes: dict[str, Any], status: Status | None
    ) -> None:
        self.root = root
        self.end_ns = end_ns
        self.attributes = attributes
        self.status = status

    def build(self, tracer: trace.Tracer, handoff: SpanIdHandoff | None) -> None:
        self.root.set_attributes(self.attributes)
        if self.status is not None:
            self.root.set_status(self.status)
        self.root.end(end_time=self.end_ns)


class KnownClean(Protocol):
    """What the span observer reads of `redaction.CleanTextCache` to list `clean_texts`."""

    def is_clean(self, s: str) -> bool:
        """Whether `s` is remembered as a string the redactor leaves unchanged."""
        ...

    @property
    def young(self) -> set[str]:
        """A quick first look: a string in it is remembered (`is_clean` answers the rest)."""
        ...


def known_clean(
    clean_text: KnownClean, call_id: str, arguments: str, result: str
) -> tuple[str, ...]:
    """Those of a call's id, arguments and result that the memory of clean strings knows now
    (`PendingSpan.clean_texts`). On every call's path: three plain looks, no loop."""
    young = clean_text.young  # the common case: all three, in one look each
    if call_id in young and arguments in young and result in young:
        return call_id, arguments, result
    return tuple(filter(clean_text.is_clean, (call_id, arguments, result)))


class RuntimeSpan(ReadableSpan):
    """An ended span the runtime built itself (`span_builder.DirectBuild`), with the texts on
    it that were known clean when the turn recorded it (`PendingSpan.clean_texts`).

    The export guard takes those very string objects as clean (by identity: a string cannot
    change) without asking the memory of clean strings. That memory is bounded: in a turn of
    thousands of calls it has let a call's id, arguments and result go by the time the call's
    span reaches the export thread, and the guard would scan them again (RE2 hands the GIL over on
    every match, so the export thread and the turn trade it back and forth). Every other
    string of the span, an equal copy of a listed text included, is checked as usual.
    """

    clean_texts: tuple[str, ...] = ()
    """The texts known clean when the span was recorded (set by the build worker)."""
