"""The span export guard: the last redaction pass on the export path of every span.

`RedactingSpanExporter` wraps any `SpanExporter`. Ended spans are read-only, so it follows one
path: span → dict → the steps of `guard_steps` → a new span → the wrapped exporter; a span no
step changed ships as it was. Spans from user code and other instrumentation share the
provider, so they meet the same `Redactor`. *When* spans ship is `batching.py`'s job.

Risky part: the guard must never let an unscrubbed span through. A step that fails on a span
drops that span (counted) rather than exporting it as it was. A Python string can hold a lone
surrogate that no exporter can encode (protobuf and OTLP/JSON both need UTF-8): the steps
write each one as the six characters `\\udXXX` (`_terminal.encodable`, the runtime's one
policy), so the span ships whole instead of losing its attributes or its batch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Protocol, TypedDict

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status
from opentelemetry.util.types import AttributeValue

from ..._terminal import encodable
from ...redaction import RUNTIME_IDS, CleanTextCache
from ..health import HealthCounter, Signal, TelemetryHealth
from .attributes import RECEIPT_KEY, RUNTIME_SCOPE
from .deferred_spans import RuntimeSpan

__all__ = [
    "AttributeScrubber",
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
_PLAIN = frozenset({int, float, bool, type(None)})
"""Attribute value types with no text in them."""

_receipt_form = RUNTIME_IDS["receipt"].fullmatch
"""A call's receipt, as the runtime writes it (`zc-receipt-{seconds}-{43 base64url}`): an HMAC,
not a payload. Each one is new, so it is never in the clean-text memory; scanning it cost a
redactor call per span (and RE2 hands the GIL over on every match)."""


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


class _Scrubber:
    """Shared set-up of the steps: bind the redactor's `redact_text` once.

    The helpers return their argument itself when nothing in it changed, so a step can leave
    the field alone.
    """

    def __init__(self, redactor: TextRedactor) -> None:
        self._redact = redactor.redact_text

    def _text(self, text: str) -> str:
        redacted = encodable(self._redact(text))
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


def _runtime_receipt(span: ReadableSpan, attributes: Mapping[str, AttributeValue] | None) -> object:
    """The receipt on one of the runtime's own tool spans, when it has exactly the form the
    runtime writes (as `RUNTIME_IDS` keeps it in our log lines); else None. Any other value of
    the key, or the key on a span of another scope, is scanned like every string."""
    if not attributes:
        return None
    receipt = attributes.get(RECEIPT_KEY)
    if type(receipt) is not str or _receipt_form(receipt) is None:
        return None
    scope = span.instrumentation_scope
    return receipt if scope is not None and scope.name == RUNTIME_SCOPE else None


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
        self._health = health
        self._clean: CleanTextCache | None = None
        if steps is None:
            # The default chain: a span all of whose strings are clean ships without a pass
            # through the steps (`_untouched`), which would change nothing in it.
            self._clean = redactor if isinstance(redactor, CleanTextCache) else None
            self._clean = self._clean or CleanTextCache(redactor)
            steps = guard_steps(self._clean)
        self._steps = tuple(steps)

    def guard(self, span: ReadableSpan) -> ReadableSpan:
        """One span through the chain (a bare loop over the steps).

        When no step would change a field, the original span is what ships: rebuilding it
        would copy every field into an equal span. With the default chain that is known up
        front, when every string the steps scrub is one the redactor leaves unchanged.
        """
        if self._clean is not None and self._untouched(span):
            return span
        data = span_to_dict(span)
        before = dict(data)
        for step in self._steps:
            data = step(data)
        if len(data) == len(before) and all(
            data.get(key, _MISSING) is value for key, value in before.items()
        ):
            return span
        return span_from_dict(data)

    def _untouched(self, span: ReadableSpan) -> bool:
        """Whether the default steps would leave `span` as it is: every string they scrub —
        the name, string attributes and string items of sequences, event names and
        attributes, link attributes, the status description — is clean."""
        clean = self._clean
        unchanged = clean.unchanged  # type: ignore[union-attr]
        if type(span) is RuntimeSpan or type(span) is ReadableSpan:
            # What the SDK and the build worker hand on: its fields read directly, not
            # through properties that wrap the attributes and copy events and links.
            name, attributes, status = span._name, span._attributes, span._status
            events, links = span._events, span._links
        else:
            name, attributes, status = span.name, span.attributes, span.status
            events, links = span.events, span.links
        trusted: tuple[object, ...] = (_runtime_receipt(span, attributes),)
        if type(span) is RuntimeSpan:
            trusted += span.clean_texts
        if name not in clean.young and not unchanged(name):  # type: ignore[union-attr]
            return False
        if not self._clean_attributes(attributes, trusted):
            return False
        for event in events:
            if not unchanged(event.name) or not self._clean_attributes(event.attributes):
                return False
        for link in links:
            if not self._clean_attributes(link.attributes):
                return False
        description = status.description
        return not description or unchanged(description)

    def _clean_attributes(
        self, attributes: Mapping[str, AttributeValue] | None, trusted: tuple[object, ...] = ()
    ) -> bool:
        """Whether every string in `attributes` is clean; the very objects in `trusted` (a
        value the runtime generated, see `_runtime_receipt`; texts known clean when the turn
        recorded the span, see `RuntimeSpan`) are taken as clean unscanned."""
        if not attributes:
            return True
        unchanged = self._clean.unchanged  # type: ignore[union-attr]
        known = self._clean.young  # type: ignore[union-attr]  # a quick first look
        trusted_ids: set[int] | None = None
        for value in attributes.values():
            kind = type(value)
            if kind is str:
                if value in known:
                    continue
                # By identity: the ids of objects the span holds are theirs alone.
                if trusted_ids is None:
                    trusted_ids = set(map(id, trusted))
                if id(value) in trusted_ids:
                    continue
                if not unchanged(value):  # type: ignore[arg-type]
                    return False
            elif kind is tuple or kind is list:
                for item in value:  # type: ignore[union-attr]
                    if type(item) is str:
                        if not unchanged(item):
                            return False
                    elif isinstance(item, str):
                        return False  # a str subclass: the steps decide
            elif kind not in _PLAIN:
                return False  # anything unexpected: the steps decide
        return True

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
