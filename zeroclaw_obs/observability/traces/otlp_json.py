"""The `--otlp-json` file: OTLP/JSON lines, as the Collector's file exporter writes them.

Each line is one `ExportTraceServiceRequest` in the OTLP/JSON encoding of the OTLP
specification (the form the Collector's `file` exporter writes and its `otlpjsonfile`
receiver reads): lowerCamelCase field names, enums as integers, 64-bit integers as decimal
strings, and — unlike protobuf's default JSON mapping, which base64-encodes `bytes` —
`traceId`/`spanId`/`parentSpanId` as lowercase hex.

`encode_otlp_json` writes that JSON straight from the SDK's `ReadableSpan`s, with no protobuf
in between: on the export thread the protobuf round trip (`encode_spans`, then `MessageToDict`)
cost several times what the whole guard does. The output is byte for byte what the OTLP
exporter's own encoder followed by `MessageToDict(use_integers_for_enums=True)` gives, hex ids
aside, and a test holds the two side by side.

Risky part: that equivalence. The rules protobuf applied implicitly are spelled out here:
fields in field-number order; a scalar left at its default (0, "", empty) is omitted, while a
set message (`status`, `scope`, `resource`) or a set member of `AnyValue`'s oneof is written
even when empty; `double` NaN and infinities are the strings `"NaN"`, `"Infinity"`,
`"-Infinity"`; an attribute that protobuf could not encode (an unsupported type, an integer
outside int64, text that is not valid UTF-8) is skipped and logged, while such text anywhere
else fails the whole request.

`read_otlp_json` flattens such a file back into one plain dict per span, for tests and the
terminal trace tree.
"""

from __future__ import annotations

import base64
import contextlib
import json
import json.encoder
import logging
import math
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind

from .otlp_json_read import read_otlp_json

__all__ = ["OtlpJsonFileExporter", "encode_otlp_json", "read_otlp_json"]


_log = logging.getLogger(__name__)


_KINDS = {
    SpanKind.INTERNAL: "1",
    SpanKind.SERVER: "2",
    SpanKind.CLIENT: "3",
    SpanKind.PRODUCER: "4",
    SpanKind.CONSUMER: "5",
}
"""`Span.SpanKind` of the OTLP protocol (0, unspecified, is never written by the SDK)."""


_HAS_IS_REMOTE = "256"


_HAS_AND_IS_REMOTE = "768"
"""`SpanFlags`: every span and link says whether it knows if its parent is remote (0x100),
and if so whether it is (0x200)."""


_INT64_MIN, _INT64_END = -(2**63), 2**63


_NOT_FINITE = {math.inf: '"Infinity"', -math.inf: '"-Infinity"'}


_string = json.encoder.encode_basestring
"""A JSON string literal, as `json.dumps(s, ensure_ascii=False)` writes it (the C function)."""


_float = float.__repr__
"""A finite double, as `json.dumps` writes it."""


def encode_otlp_json(spans: Sequence[ReadableSpan]) -> str:
    """One `ExportTraceServiceRequest` as a single line of OTLP/JSON (no trailing newline).

    Raises:
        Exception: a span the OTLP encoder cannot encode (no context, an unknown kind, a name
            that is not valid UTF-8, …).
    """
    return _encode_line(spans)[:-1].decode("utf-8")


def _encode_line(spans: Sequence[ReadableSpan]) -> bytes:
    """The request as UTF-8 bytes, newline included: what the file exporter appends.

    The first pass writes every string as it is. Text that is not valid UTF-8 (lone
    surrogates) only shows when the line is encoded; the rare line where it does is written
    again with every attribute string checked, so the attributes holding such text are
    skipped as the OTLP encoder skips them, and such text anywhere else still fails.
    """
    writer = _RequestWriter(strict=False)
    try:
        line = writer.request(spans, "\n").encode("utf-8")
    except UnicodeEncodeError:
        writer = _RequestWriter(strict=True)
        line = writer.request(spans, "\n").encode("utf-8")
    for reason in writer.skipped:
        # The type only: the value could be anything, a secret included.
        _log.warning("span attribute not encodable as OTLP (%s); skipped", reason)
    return line


class _RequestWriter:
    """Writes the request as compact JSON text; one instance per request.

    The text is what `json.dumps(…, ensure_ascii=False, separators=(",", ":"))` writes for
    `MessageToDict`'s output, built from pieces: a span carries some forty small JSON objects,
    and building them as dicts for `json` cost more than all the rest of the export.

    Spans are grouped by resource, then by instrumentation scope, in order of first
    appearance, as the OTLP encoder groups them (by equality). Resource equality hashes the
    resource's attributes as JSON, so the resource and scope of the previous span are tried
    by identity first: one turn's spans share both objects.

    Args:
        strict: check every attribute string for UTF-8 (see `_encode_line`).
    """

    def __init__(self, *, strict: bool) -> None:
        self._strict = strict
        self.skipped: list[str] = []
        """Why each attribute that could not be encoded was skipped (an exception type)."""
        self._groups: dict[Any, dict[Any, list[str]]] = {}
        self._last: tuple[Any, Any, list[str] | None] = (None, None, None)

    def request(self, spans: Sequence[ReadableSpan], end: str = "") -> str:
        """The request's text, then `end`. Written as one list of pieces joined once: joining
        level by level copied a request of a few MB several times over."""
        for span in spans:
            self._group(span).append(self._span(span))
        out = ['{"resourceSpans":[']
        for n, (resource, scopes) in enumerate(self._groups.items()):
            attributes = self._attributes(resource.attributes)
            out.append(',{"resource":{' if n else '{"resource":{')
            if attributes:
                out.append(f'"attributes":{attributes}')
            out.append('},"scopeSpans":[')
            for m, (scope, encoded) in enumerate(scopes.items()):
                self._scope_spans(scope, encoded, out, first=not m)
            out.append("]")
            if resource.schema_url:
                out.append(f',"schemaUrl":{_string(resource.schema_url)}')
            out.append("}")
        out.append("]}")
        out.append(end)
        return "".join(out)

    def _group(self, span: ReadableSpan) -> list[str]:
        resource = span.resource
        scope = span.instrumentation_scope or None
        last_resource, last_scope, group = self._last
        if group is None or resource is not last_resource or scope is not last_scope:
            group = self._groups.setdefault(resource, {}).setdefault(scope, [])
            self._last = (resource, scope, group)
        return group

    def _scope_spans(self, scope: Any, spans: list[str], out: list[str], *, first: bool) -> None:
        fields = []
        if scope is not None:
            if scope.name:
                fields.append(f'"name":{_string(scope.name)}')
            if scope.version:
                fields.append(f'"version":{_string(scope.version)}')
            if attributes := self._attributes(scope.attributes):
                fields.append(f'"attributes":{attributes}')
        out.append(('{"scope":{' if first else ',{"scope":{') + ",".join(fields) + '},"spans":[')
        for n, span in enumerate(spans):
            if n:
                out.append(",")
            out.append(span)
        out.append("]")
        if scope is not None and scope.schema_url:
            out.append(f',"schemaUrl":{_string(scope.schema_url)}')
        out.append("}")

    def _span(self, span: ReadableSpan) -> str:
        context = span.get_span_context()
        parent = span.parent
        out = [
            f'{{"traceId":"{_trace_id(context.trace_id)}","spanId":"{_span_id(context.span_id)}"'
        ]
        if state := _trace_state(context.trace_state):
            out.append(f',"traceState":{_string(state)}')
        if parent:
            out.append(f',"parentSpanId":"{_span_id(parent.span_id)}"')
        if span.name:
            out.append(f',"name":{_string(span.name)}')
        out.append(f',"kind":{_KINDS[span.kind]}')
        if span.start_time:
            out.append(f',"startTimeUnixNano":"{span.start_time}"')
        if span.end_time:
            out.append(f',"endTimeUnixNano":"{span.end_time}"')
        if attributes := self._attributes(span.attributes):
            out.append(f',"attributes":{attributes}')
        if span.dropped_attributes:
            out.append(f',"droppedAttributesCount":{span.dropped_attributes}')
        if events := span.events:
            out.append(',"events":[' + ",".join(self._event(event) for event in events) + "]")
        if span.dropped_events:
            out.append(f',"droppedEventsCount":{span.dropped_events}')
        if links := span.links:
            out.append(',"links":[' + ",".join(self._link(link) for link in links) + "]")
        if span.dropped_links:
            out.append(f',"droppedLinksCount":{span.dropped_links}')
        status = span.status
        if status is not None:
            out.append(',"status":' + _status(status.description, status.status_code.value))
        out.append(f',"flags":{_flags(parent)}}}')
        return "".join(out)

    def _event(self, event: Any) -> str:
        fields = []
        if event.timestamp:
            fields.append(f'"timeUnixNano":"{event.timestamp}"')
        if event.name:
            fields.append(f'"name":{_string(event.name)}')
        if attributes := self._attributes(event.attributes):
            fields.append(f'"attributes":{attributes}')
        if event.dropped_attributes:
            fields.append(f'"droppedAttributesCount":{event.dropped_attributes}')
        return "{" + ",".join(fields) + "}"

    def _link(self, link: Any) -> str:
        context = link.context
        text = f'{{"traceId":"{_trace_id(context.trace_id)}","spanId":"{_span_id(context.span_id)}"'
        if attributes := self._attributes(link.attributes):
            text += f',"attributes":{attributes}'
        if link.dropped_attributes:
            text += f',"droppedAttributesCount":{link.dropped_attributes}'
        return text + f',"flags":{_flags(context)}}}'

    def _attributes(self, attributes: Mapping[str, Any] | None) -> str:
        """The `KeyValue` list, or "" when there is none to write.

        One that cannot be encoded is skipped (and logged once the line is written), as the
        OTLP encoder does.
        """
        if not attributes:
            return ""
        encoded = []
        for key, value in attributes.items():
            try:
                encoded.append(self._key_value(key, value))
            except Exception as exc:
                self.skipped.append(type(exc).__name__)
        return "[" + ",".join(encoded) + "]" if encoded else ""

    def _key_value(self, key: Any, value: Any) -> str:
        if type(key) is not str:
            if not isinstance(key, str):
                raise TypeError("attribute key is not a string")
            key = str(key)
        if self._strict:
            key.encode("utf-8")
        if not key:
            return '{"value":' + self._any_value(value) + "}"
        return '{"key":' + _string(key) + ',"value":' + self._any_value(value) + "}"

    def _any_value(self, value: Any) -> str:
        kind = type(value)
        if kind is str:
            if self._strict:
                value.encode("utf-8")
            return '{"stringValue":' + _string(value) + "}"
        handler = _SCALARS.get(kind)
        if handler is not None:
            return handler(value)
        if value is None:
            return "{}"
        if isinstance(value, bool):
            return _bool_value(value)
        if isinstance(value, str):
            return self._any_value(str(value))
        if isinstance(value, int):
            return _int_value(value)
        if isinstance(value, float):
            return _double_value(value)
        if isinstance(value, bytes):
            return _bytes_value(value)
        if isinstance(value, Sequence):
            values = ",".join(self._any_value(v) for v in value)
            return '{"arrayValue":{' + (f'"values":[{values}]' if value else "") + "}}"
        if isinstance(value, Mapping):
            pairs = ",".join(self._key_value(str(k), v) for k, v in value.items())
            return '{"kvlistValue":{' + (f'"values":[{pairs}]' if value else "") + "}}"
        raise TypeError(f"unsupported attribute type {type(value).__name__}")


def _bool_value(value: bool) -> str:
    return '{"boolValue":true}' if value else '{"boolValue":false}'


def _int_value(value: int) -> str:
    if not _INT64_MIN <= value < _INT64_END:
        raise ValueError("integer outside int64")
    return f'{{"intValue":"{int(value)}"}}'


def _double_value(value: float) -> str:
    if math.isfinite(value):
        return '{"doubleValue":' + _float(value) + "}"
    return '{"doubleValue":' + _NOT_FINITE.get(value, '"NaN"') + "}"


def _bytes_value(value: bytes) -> str:
    return '{"bytesValue":"' + base64.b64encode(value).decode("ascii") + '"}'


_SCALARS: dict[type, Callable[[Any], str]] = {
    bool: _bool_value,
    int: _int_value,
    float: _double_value,
    bytes: _bytes_value,
}
"""The exact types attributes hold besides `str`; subclasses and containers take the long way."""


def _status(message: str | None, code: int) -> str:
    """Protobuf omits a scalar left at its default: an empty message, code 0 (unset)."""
    fields = []
    if message:
        fields.append(f'"message":{_string(message)}')
    if code:
        fields.append(f'"code":{code}')
    return "{" + ",".join(fields) + "}"


def _trace_state(state: Any) -> str:
    if state is None:
        return ""
    return ",".join(f"{key}={value}" for key, value in state.items())


def _trace_id(trace_id: int) -> str:
    return trace_id.to_bytes(16, "big").hex()


def _span_id(span_id: int) -> str:
    return span_id.to_bytes(8, "big").hex()


def _flags(parent: Any) -> str:
    return _HAS_AND_IS_REMOTE if parent and parent.is_remote else _HAS_IS_REMOTE


class OtlpJsonFileExporter(SpanExporter):
    """Appends one OTLP/JSON `ExportTraceServiceRequest` line per `export` call to `path`.

    The file is opened (in append mode) on the first export, so nothing is created when a run
    exports nothing. A file that already exists when the exporter is made (a staged temp file)
    is never created again: once it is removed (an interrupted run discarding what it staged),
    a late export fails instead of leaving a stray file. Appends are serialised by a lock and
    flushed per export, so a reader sees whole lines. `export` never raises: an encoding or
    I/O error reads as `FAILURE`.

    Args:
        path: the output file; its directory must exist.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._create = not self.path.exists()
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._closed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        try:
            line = _encode_line(spans)
        except Exception as exc:
            _log.warning(
                "could not encode %d spans as OTLP/JSON: %s", len(spans), type(exc).__name__
            )
            return SpanExportResult.FAILURE
        with self._lock:
            if self._closed:
                return SpanExportResult.FAILURE
            try:
                if self._file is None:
                    self._file = self._open()
                self._file.write(line)
                self._file.flush()
            except (OSError, ValueError) as exc:
                _log.warning("could not write %s: %s", self.path, type(exc).__name__)
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def _open(self) -> IO[bytes]:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC | (os.O_CREAT if self._create else 0)
        return os.fdopen(os.open(self.path, flags, 0o666), "ab")

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
            if self._file is not None:
                with contextlib.suppress(OSError):
                    self._file.close()
                self._file = None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # every export is flushed before it returns
