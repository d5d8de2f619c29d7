"""OTLP/HTTP protobuf export with our own encoder: `ExportTraceServiceRequest` bytes written
straight from the SDK's `ReadableSpan`s.

The SDK's exporter builds a Python protobuf message per span, attribute and value
(`encode_spans`), then serialises it: ~80 µs a tool span on the export thread, more than every
other step of a span's way out together. `OtlpProtoEncoder` writes the protobuf wire format
itself (varints, length-delimited fields, fixed64 times and fixed32 flags), with the encoded
form of attribute keys and of short repeated values remembered. `otlp_proto_http.py`'s
`OtlpProtoSpanExporter` is the SDK's `OTLPSpanExporter` with only the encoding swapped.

Risky part: byte-for-byte equivalence with the SDK's encoder, which the tests hold side by side
(the same bytes, decoded to an equal message). The rules protobuf applied implicitly are spelled
out here: fields in field-number order (`flags`, 16, after `status`, 15); a proto3 scalar at its
default (0, "", empty bytes) is omitted, while a set message (`resource`, `scope`, `status`, a
key's `value`) and a set member of `AnyValue`'s oneof are written even when empty; ids are
big-endian bytes; times are fixed64 and a time of 0 or None is omitted; `int64` is a ten-byte
varint when negative. An attribute the SDK's encoder cannot encode (an unsupported type, an
integer outside int64, text that is not valid UTF-8, such an item in an array) is skipped and
logged by type, never by value; such text anywhere else (a span name, a status message) fails
the request, as it does in protobuf. Values are read the SDK's way (`isinstance` in its order:
None, bool, str, int, float, bytes, Sequence, Mapping), so a `bytearray` is an array of ints and
a mapping a key-value list there too.

The gRPC exporter keeps the SDK's encoder: gRPC serialises the message itself.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util import BoundedList
from opentelemetry.trace import SpanContext, SpanKind, StatusCode

from .deferred_spans import RuntimeSpan

__all__ = ["OtlpProtoEncoder", "encode_otlp_proto"]

_log = logging.getLogger(__name__)

_KINDS = {
    SpanKind.INTERNAL: b"\x30\x01",
    SpanKind.SERVER: b"\x30\x02",
    SpanKind.CLIENT: b"\x30\x03",
    SpanKind.PRODUCER: b"\x30\x04",
    SpanKind.CONSUMER: b"\x30\x05",
}
"""`Span.kind` (field 6) with its tag, by SDK kind."""

_FLAGS_LOCAL = b"\x85\x01" + struct.pack("<I", 0x100)
_FLAGS_REMOTE = b"\x85\x01" + struct.pack("<I", 0x300)
"""`Span.flags` (field 16, fixed32): the parent's remoteness is known (0x100), and whether it
is remote (0x200)."""
_LINK_FLAGS_LOCAL = b"\x35" + struct.pack("<I", 0x100)
_LINK_FLAGS_REMOTE = b"\x35" + struct.pack("<I", 0x300)
_INTERNAL = _KINDS[SpanKind.INTERNAL]
_UNSET, _OK, _ERROR = StatusCode.UNSET, StatusCode.OK, StatusCode.ERROR

_INT64_MIN, _INT64_END = -(2**63), 2**63
_SMALL = 64
"""Values up to this many characters (and every int, bool, float) have their encoded pair
remembered: the names, ids and outcomes that repeat on every span."""
_MAX_REMEMBERED = 8192
"""Remembered keys and pairs per encoder; the memory starts over beyond this."""

_fixed64 = struct.Struct("<Q").pack
_times = struct.Struct("<BQBQ").pack
"""`start_time_unix_nano` and `end_time_unix_nano` (fields 7 and 8) with their tags."""
_double = struct.Struct("<d").pack
_BYTE = tuple(bytes((n,)) for n in range(128))


_TWO_BYTES: dict[int, bytes] = {}
"""The two-byte varints made so far (sizes of 128 B to 16 KB: a span's long strings and the
span itself), by value: at most 16,256 small entries, kept for the process."""


def _varint(n: int) -> bytes:
    """A non-negative integer as a protobuf varint."""
    if n < 0x80:
        return _BYTE[n]
    if n < 0x4000:
        encoded = _TWO_BYTES.get(n)
        if encoded is None:
            encoded = _TWO_BYTES[n] = bytes(((n & 0x7F) | 0x80, n >> 7))
        return encoded
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_TEXT_HEADS: dict[int, bytes] = {}
"""`_text_head` by size, for sizes under 16 KB: at most 16,384 entries, kept for the process."""


def _text_head(size: int) -> bytes:
    """What precedes `size` bytes of text as a `KeyValue`'s value: the `value` tag and the
    `AnyValue`'s size, the `string_value` tag and the text's size."""
    head = _TEXT_HEADS.get(size)
    if head is None:
        text_size = _varint(size)
        head = b"\x12" + _varint(size + 1 + len(text_size)) + b"\x0a" + text_size
        if size < 0x4000:
            _TEXT_HEADS[size] = head
    return head


def _field(tag: bytes, body: bytes) -> bytes:
    """A length-delimited field: its tag, the body's length, the body."""
    return tag + _varint(len(body)) + body


def _text(tag: bytes, text: str) -> bytes:
    """A proto3 string field, omitted when empty. Raises UnicodeEncodeError on text that is
    not valid UTF-8 (a lone surrogate), as protobuf does."""
    if not text:
        return b""
    data = text.encode()
    return tag + _varint(len(data)) + data


class _Unencodable(Exception):
    """An attribute value the SDK's encoder would reject (its attribute is skipped)."""


def _any_value(value: Any) -> bytes:
    """The body of an `AnyValue`, read as the SDK's `_encode_value` reads it."""
    if value is None:
        return b""
    if isinstance(value, bool):
        return b"\x10\x01" if value else b"\x10\x00"
    if isinstance(value, str):
        data = value.encode()
        return b"\x0a" + _varint(len(data)) + data
    if isinstance(value, int):
        if not _INT64_MIN <= value < _INT64_END:
            raise _Unencodable("int out of int64 range")
        return b"\x18" + _varint(value if value >= 0 else value + (1 << 64))
    if isinstance(value, float):
        return b"\x21" + _double(value)
    if isinstance(value, bytes):
        return b"\x3a" + _varint(len(value)) + value
    if isinstance(value, Sequence):
        items = b"".join(_field(b"\x0a", _any_value(v)) for v in value)
        return _field(b"\x2a", items)
    if isinstance(value, Mapping):
        pairs = b"".join(_field(b"\x0a", _key_value(str(k), v)) for k, v in value.items())
        return _field(b"\x32", pairs)
    raise _Unencodable(type(value).__name__)


def _key_value(key: str, value: Any) -> bytes:
    """The body of a `KeyValue`: the key (omitted when empty), then the value (always set)."""
    return _text(b"\x0a", key) + _field(b"\x12", _any_value(value))


def _dropped(items: Any, bounded: type) -> int:
    """What the SDK's `dropped_*` properties read: the count of a bounded container, else 0."""
    kind = type(items)
    if kind is dict or kind is tuple or kind is list or items is None:
        return 0
    return items.dropped if isinstance(items, bounded) else 0


def _status(status: Any) -> bytes:
    """`Span.status` (field 15): always set, empty for UNSET with no description."""
    code = status.status_code
    # By identity: `.value` and hashing are Python-level on an enum.
    value = 0 if code is _UNSET else 2 if code is _ERROR else 1 if code is _OK else code.value
    description = status.description
    if not value and not description:
        return b"\x7a\x00"
    message = _text(b"\x12", description or "")
    return _field(b"\x7a", message + (b"\x18" + _varint(value) if value else b""))


def _ids(context: SpanContext) -> bytes:
    """`trace_id` (field 1) and `span_id` (field 2) of a span or a link."""
    return (
        b"\x0a\x10"
        + context.trace_id.to_bytes(16, "big")
        + b"\x12\x08"
        + context.span_id.to_bytes(8, "big")
    )


def _skipped(reason: str) -> None:
    # As the SDK's encoder: the attribute is skipped, the span kept. The type only: the value
    # could be anything, a secret included.
    _log.warning("span attribute not encodable as OTLP (%s); skipped", reason)


class OtlpProtoEncoder:
    """Writes `ExportTraceServiceRequest` bytes; keeps what repeats from one request to the next.

    What it remembers — the encoded form of attribute keys, span names and of `(key, value)`
    pairs whose value is a short string, an int or a bool, per attribute field — is bounded
    (`_MAX_REMEMBERED` each, then forgotten whole) and
    holds only what it was given to encode. One encoder serves one exporter; `encode` may be
    called from several threads (a lost race recomputes an entry).
    """

    def __init__(self) -> None:
        self._keys: dict[str, bytes] = {}
        self._pairs: dict[bytes, dict[tuple[Any, ...], bytes]] = {}
        self._names: dict[str, bytes] = {}
        self._trace_id = -1
        self._trace_field = b""
        self._status: object = None
        self._status_field = b""

    def encode(self, spans: Sequence[ReadableSpan]) -> bytes:
        """The request for `spans`, grouped by resource, then by instrumentation scope, in order
        of first appearance, as the SDK's encoder groups them (by equality).

        Raises:
            Exception: a span the SDK's encoder could not encode either (no context, an unknown
                kind, a name or status message that is not valid UTF-8, a time out of range).
        """
        groups: dict[Any, dict[Any, list[bytes]]] = {}
        last_resource: Any = None
        last_scope: Any = None
        group: list[bytes] | None = None
        for span in spans:
            if type(span) is ReadableSpan or type(span) is RuntimeSpan:
                resource, scope = span._resource, span._instrumentation_scope or None
            else:
                resource, scope = span.resource, span.instrumentation_scope or None
            # Resources hash their attributes as JSON: one turn's spans share both objects,
            # so the previous span's group is tried by identity first.
            if group is None or resource is not last_resource or scope is not last_scope:
                group = groups.setdefault(resource, {}).setdefault(scope, [])
                last_resource, last_scope = resource, scope
            group.extend(self._span(span))
        # Every piece goes into one list, each message's length worked out from its parts',
        # and the request is joined once: joining level by level copied a request of a few
        # MB five times over, as much CPU as encoding its spans.
        out: list[bytes] = []
        for resource, scopes in groups.items():
            attributes = self._attributes(b"\x0a", resource.attributes)
            pieces = [b"\x0a" + _varint(len(attributes)), attributes]
            for scope, encoded in scopes.items():
                head, schema_url = self._scope(scope)
                size = len(head) + sum(map(len, encoded)) + len(schema_url)
                pieces.append(b"\x12" + _varint(size))
                pieces.append(head)
                pieces.extend(encoded)
                pieces.append(schema_url)
            pieces.append(_text(b"\x1a", resource.schema_url))
            out.append(b"\x0a" + _varint(sum(map(len, pieces))))
            out.extend(pieces)
        return b"".join(out)

    def _scope(self, scope: Any) -> tuple[bytes, bytes]:
        """A `ScopeSpans`' `scope` field (always set, empty for no scope) and `schema_url`."""
        if scope is None:
            return b"\x0a\x00", b""
        head = (
            _text(b"\x0a", scope.name)
            + _text(b"\x12", scope.version or "")
            + self._attributes(b"\x1a", scope.attributes)
        )
        return _field(b"\x0a", head), _text(b"\x1a", scope.schema_url or "")

    def _span(self, span: ReadableSpan) -> tuple[bytes, bytes]:
        """One `Span` field of a `ScopeSpans` (tag 2), in field-number order: its tag and
        size, then its body (kept apart: the request's one join copies the body once)."""
        if type(span) is ReadableSpan or type(span) is RuntimeSpan:
            # What the SDK hands processors: its fields read directly, not through a dozen
            # properties (three of them `isinstance` checks against abstract classes).
            context, parent, name = span._context, span._parent, span._name
            start, end, status = span._start_time, span._end_time, span._status
            attributes, events, links = span._attributes, span._events, span._links
            dropped_attributes = (
                0 if type(attributes) is dict else _dropped(attributes, BoundedAttributes)
            )
            dropped_events = 0 if type(events) is tuple else _dropped(events, BoundedList)
            dropped_links = 0 if type(links) is tuple else _dropped(links, BoundedList)
            kind = span._kind
        else:
            context, parent, name = span.get_span_context(), span.parent, span.name
            start, end, status = span.start_time, span.end_time, span.status
            attributes, events, links = span.attributes, span.events, span.links
            dropped_attributes = span.dropped_attributes
            dropped_events = span.dropped_events
            dropped_links = span.dropped_links
            kind = span.kind
        if type(context) is SpanContext:
            # A tuple: unpacked at once rather than read through five properties.
            trace_id, span_id, _, _, state, _ = context
        else:
            trace_id, span_id, state = context.trace_id, context.span_id, context.trace_state
        if trace_id != self._trace_id:
            self._trace_id, self._trace_field = trace_id, b"\x0a\x10" + trace_id.to_bytes(16, "big")
        head = self._trace_field + b"\x12\x08" + span_id.to_bytes(8, "big")
        if state:
            head += _text(b"\x1a", ",".join(f"{k}={v}" for k, v in state.items()))
        remote = False
        if parent:
            if type(parent) is SpanContext:
                _, parent_id, remote, _, _, _ = parent
            else:
                parent_id, remote = parent.span_id, parent.is_remote
            head += b"\x22\x08" + parent_id.to_bytes(8, "big")
        elif parent is not None:
            remote = parent.is_remote
        head += self._names.get(name) or self._name(name)
        head += _INTERNAL if kind is SpanKind.INTERNAL else _KINDS[kind]
        if start and end:
            head += _times(0x39, start, 0x41, end)
        elif start:
            head += b"\x39" + _fixed64(start)
        elif end:
            head += b"\x41" + _fixed64(end)
        parts = [head]
        if attributes:
            self._attributes_into(parts, b"\x4a", attributes)
        if dropped_attributes:
            parts.append(b"\x50" + _varint(dropped_attributes))
        for event in events:
            parts.append(_field(b"\x5a", self._event(event)))
        if dropped_events:
            parts.append(b"\x60" + _varint(dropped_events))
        for link in links:
            parts.append(_field(b"\x6a", self._link(link)))
        if dropped_links:
            parts.append(b"\x70" + _varint(dropped_links))
        flags = _FLAGS_REMOTE if remote else _FLAGS_LOCAL
        if status is None:
            parts.append(flags)
        elif status is self._status:
            # A `Status` never changes, and spans share one (the runtime's start with the
            # same UNSET): the previous span's field is this one's.
            parts.append(self._status_field + flags)
        else:
            field = _status(status)
            self._status, self._status_field = status, field
            parts.append(field + flags)
        body = b"".join(parts)
        return b"\x12" + _varint(len(body)), body

    def _name(self, name: str) -> bytes:
        """`Span.name` (field 5), remembered: a turn's spans share a few names."""
        encoded = self._names.get(name)
        if encoded is None:
            encoded = _text(b"\x2a", name)
            if len(self._names) >= _MAX_REMEMBERED:
                self._names = {}
            if len(name) <= _SMALL:
                self._names[name] = encoded
        return encoded

    def _event(self, event: Any) -> bytes:
        timestamp = event.timestamp
        return (
            (b"\x09" + _fixed64(timestamp) if timestamp else b"")
            + _text(b"\x12", event.name)
            + self._attributes(b"\x1a", event.attributes)
            + (b"\x20" + _varint(event.dropped_attributes) if event.dropped_attributes else b"")
        )

    def _link(self, link: Any) -> bytes:
        context = link.context
        dropped = link.dropped_attributes
        return (
            _ids(context)
            + self._attributes(b"\x22", link.attributes)
            + (b"\x28" + _varint(dropped) if dropped else b"")
            + (_LINK_FLAGS_REMOTE if context.is_remote else _LINK_FLAGS_LOCAL)
        )

    def _attributes(self, tag: bytes, attributes: Mapping[str, Any] | None) -> bytes:
        """Each attribute as a `KeyValue` field with `tag`; the unencodable ones skipped."""
        if not attributes:
            return b""
        out: list[bytes] = []
        self._attributes_into(out, tag, attributes)
        return b"".join(out)

    def _attributes_into(self, out: list[bytes], tag: bytes, attributes: Mapping[str, Any]) -> None:
        """`_attributes`, its pieces appended to `out` (a span's parts) instead of joined.

        Each item is first looked up in the memory as it is: a short string's pair is
        remembered under the item itself, `(key, value)`, and only a string (or a str
        subclass, which encodes as the same string) equals a string, so an int, a bool or a
        float never finds one. An unhashable value (a list, a mapping) is written by its type.
        """
        pairs = self._pairs.get(tag)
        if pairs is None or len(pairs) >= _MAX_REMEMBERED:
            pairs = self._pairs[tag] = {}
        append = out.append
        get = pairs.get
        last_text: object = None
        last_head = last_data = b""
        last_size = 0
        for item in attributes.items():
            try:
                encoded = get(item)
            except Exception:  # unhashable (TypeError), or a hash that fails
                encoded = None
            if encoded is not None:
                append(encoded)
                continue
            value = item[1]
            kind = type(value)
            if kind is str:
                if len(value) <= _SMALL:
                    encoded = self._pair(tag, item[0], value, pairs, item)
                    if encoded:
                        append(encoded)
                    continue
                # A long string: the text goes into the request's one join as it is,
                # after one piece of tag, sizes and key (copied once, not thrice). A span
                # carries some twice (arguments as `gen_ai.tool.call.arguments` and
                # `input.value`, the result as `gen_ai.tool.call.result` and
                # `output.value`): the same object, encoded once.
                try:
                    key = self._keys.get(item[0]) or self._key(item[0])
                    if value is not last_text:
                        last_data = value.encode()
                        size = len(last_data)
                        last_head = _TEXT_HEADS.get(size) or _text_head(size)
                        last_size = len(last_head) + size
                        last_text = value
                except UnicodeEncodeError:  # a lone surrogate in the key or the text
                    _skipped("UnicodeEncodeError")
                    continue
                append(tag + _varint(len(key) + last_size) + key + last_head)
                append(last_data)
            elif kind is int or kind is bool:
                # (key, type, value): True == 1, the type tells them apart.
                remembered = (item[0], kind, value)
                encoded = get(remembered) or self._pair(tag, item[0], value, pairs, remembered)
                if encoded:
                    append(encoded)
            else:
                # Floats are not remembered (0.0 == -0.0), nor anything else.
                encoded = self._pair(tag, item[0], value, pairs, None)
                if encoded:
                    append(encoded)

    def _pair(
        self, tag: bytes, key: str, value: Any, pairs: dict[Any, bytes], remembered: Any
    ) -> bytes:
        """One `KeyValue` field, remembered under `remembered` (unless None); b"" when the
        SDK's encoder would skip it (logged by type, never by value)."""
        try:
            body = _any_value(value)
            pair = (self._keys.get(key) or self._key(key)) + b"\x12" + _varint(len(body)) + body
        except Exception as exc:
            _skipped(str(exc) if isinstance(exc, _Unencodable) else type(exc).__name__)
            return b""
        encoded = tag + _varint(len(pair)) + pair
        if remembered is not None:
            pairs[remembered] = encoded
        return encoded

    def _key(self, key: str) -> bytes:
        """`KeyValue.key` (field 1), omitted when empty."""
        encoded = self._keys.get(key)
        if encoded is None:
            encoded = _text(b"\x0a", key)
            if len(self._keys) >= _MAX_REMEMBERED:
                self._keys = {}
            self._keys[key] = encoded
        return encoded


def encode_otlp_proto(spans: Sequence[ReadableSpan]) -> bytes:
    """`spans` as one serialised `ExportTraceServiceRequest`: the bytes the SDK's
    `encode_spans(spans).SerializePartialToString()` gives.

    Raises:
        Exception: a span the SDK's encoder could not encode either.
    """
    return OtlpProtoEncoder().encode(spans)
