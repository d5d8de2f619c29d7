"""Reading an OTLP/JSON lines file back (tests, `redact scan`, tools): each span flattened
with its resource and scope, attribute values decoded. `otlp_json.py` writes the files."""

from __future__ import annotations

import base64
import json
import json.encoder
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["read_otlp_json"]


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
