"""The `--otlp-json` file: OTLP/JSON lines, as the Collector's file exporter writes them.

Each line is one `ExportTraceServiceRequest` in the OTLP/JSON encoding of the OTLP
specification (the form the Collector's `file` exporter writes and its `otlpjsonfile`
receiver reads): lowerCamelCase field names, enums as integers, 64-bit integers as decimal
strings, and — unlike protobuf's default JSON mapping, which base64-encodes `bytes` —
`traceId`/`spanId`/`parentSpanId` as lowercase hex. We build the request with the OTLP
exporter's own protobuf encoder (`encode_spans`), map it with `MessageToDict`, then rewrite the
id fields from base64 to hex; that last step is the one place this file differs from protobuf.

`read_otlp_json` flattens such a file back into one plain dict per span, for tests and the
terminal trace tree.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["OtlpJsonFileExporter", "encode_otlp_json", "read_otlp_json"]

_log = logging.getLogger(__name__)

_SPAN_ID_FIELDS = ("traceId", "spanId", "parentSpanId")
_LINK_ID_FIELDS = ("traceId", "spanId")


def encode_otlp_json(spans: Sequence[ReadableSpan]) -> str:
    """One `ExportTraceServiceRequest` as a single line of OTLP/JSON (no trailing newline).

    Raises:
        Exception: whatever the protobuf encoder raises for a malformed span.
    """
    request = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for span in _spans_of(request):
        _hex_ids(span, _SPAN_ID_FIELDS)
        for link in span.get("links", ()):
            _hex_ids(link, _LINK_ID_FIELDS)
    return json.dumps(request, ensure_ascii=False, separators=(",", ":"))


def _spans_of(request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for resource_spans in request.get("resourceSpans", ()):
        for scope_spans in resource_spans.get("scopeSpans", ()):
            yield from scope_spans.get("spans", ())


def _hex_ids(record: dict[str, Any], fields: tuple[str, ...]) -> None:
    for name in fields:
        value = record.get(name)
        if value:
            record[name] = base64.b64decode(value).hex()


class OtlpJsonFileExporter(SpanExporter):
    """Appends one OTLP/JSON `ExportTraceServiceRequest` line per `export` call to `path`.

    The file is opened (in append mode) on the first export, so nothing is created when a run
    exports nothing. Appends are serialised by a lock and flushed per export, so a reader sees
    whole lines. `export` never raises: an encoding or I/O error reads as `FAILURE`.

    Args:
        path: the output file; its directory must exist.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        self._closed = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        try:
            line = encode_otlp_json(spans) + "\n"
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
                    self._file = self.path.open("a", encoding="utf-8")
                self._file.write(line)
                self._file.flush()
            except (OSError, ValueError) as exc:
                _log.warning("could not write %s: %s", self.path, type(exc).__name__)
                return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
            if self._file is not None:
                with contextlib.suppress(OSError):
                    self._file.close()
                self._file = None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True  # every export is flushed before it returns


def read_otlp_json(path: Path | str) -> list[dict[str, Any]]:
    """Every span of an OTLP/JSON lines file, flattened, in file order.

    Each span is a dict: `trace_id`, `span_id`, `parent_span_id` (hex; None for a root),
    `name`, `kind` (int), `start_time_unix_nano`, `end_time_unix_nano` (int), `attributes`
    (plain dict), `events` (`name`, `time_unix_nano`, `attributes`), `links`, `status`
    (`code` int, `message` str), `resource` (plain dict) and `scope` (name).

    Raises:
        OSError: the file cannot be read.
        ValueError: a line is not an OTLP/JSON object; the message names the line.
    """
    spans: list[dict[str, Any]] = []
    with Path(path).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                request = json.loads(line)
                spans.extend(_flatten(request))
            except (ValueError, TypeError, AttributeError, KeyError) as exc:
                raise ValueError(f"{path}:{number}: not an OTLP/JSON trace request: {exc}") from exc
    return spans


def _flatten(request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for resource_spans in request.get("resourceSpans", ()):
        resource = _attributes(resource_spans.get("resource", {}).get("attributes"))
        for scope_spans in resource_spans.get("scopeSpans", ()):
            scope = scope_spans.get("scope", {}).get("name", "")
            for span in scope_spans.get("spans", ()):
                yield _span(span, resource, scope)


def _span(span: dict[str, Any], resource: dict[str, Any], scope: str) -> dict[str, Any]:
    status = span.get("status", {})
    return {
        "trace_id": span["traceId"],
        "span_id": span["spanId"],
        "parent_span_id": span.get("parentSpanId") or None,
        "name": span["name"],
        "kind": int(span.get("kind", 0)),
        "start_time_unix_nano": int(span.get("startTimeUnixNano", 0)),
        "end_time_unix_nano": int(span.get("endTimeUnixNano", 0)),
        "attributes": _attributes(span.get("attributes")),
        "events": [
            {
                "name": event.get("name", ""),
                "time_unix_nano": int(event.get("timeUnixNano", 0)),
                "attributes": _attributes(event.get("attributes")),
            }
            for event in span.get("events", ())
        ],
        "links": [
            {
                "trace_id": link["traceId"],
                "span_id": link["spanId"],
                "attributes": _attributes(link.get("attributes")),
            }
            for link in span.get("links", ())
        ],
        "status": {"code": int(status.get("code", 0)), "message": status.get("message", "")},
        "resource": resource,
        "scope": scope,
    }


def _attributes(pairs: list[dict[str, Any]] | None) -> dict[str, Any]:
    return {pair["key"]: _any_value(pair.get("value", {})) for pair in pairs or ()}


def _any_value(value: dict[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "arrayValue" in value:
        return [_any_value(v) for v in value["arrayValue"].get("values", ())]
    if "kvlistValue" in value:
        return _attributes(value["kvlistValue"].get("values"))
    if "bytesValue" in value:
        return base64.b64decode(value["bytesValue"])
    return None
