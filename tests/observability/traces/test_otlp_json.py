"""The `--otlp-json` file: OTLP/JSON encoding, the file exporter, and the reader."""

from __future__ import annotations

import base64
import json
import logging
import math
import threading
from collections.abc import Sequence

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import (
    Link,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    TraceState,
)

from zeroclaw_obs.observability.traces.otlp_json import (
    OtlpJsonFileExporter,
    encode_otlp_json,
    read_otlp_json,
)

TRACE_ID = 0x0102030405060708090A0B0C0D0E0F10
CONTEXT = SpanContext(TRACE_ID, 0x1112131415161718, False, TraceFlags(1))
PARENT = SpanContext(TRACE_ID, 0xA1A2A3A4A5A6A7A8, False, TraceFlags(1))


def fixed_span(name: str = "chat m") -> ReadableSpan:
    return ReadableSpan(
        name=name,
        context=CONTEXT,
        parent=PARENT,
        resource=Resource({"service.name": "svc"}),
        attributes={"n": 7, "s": "x"},
        events=(Event("ev", {"k": 1}, timestamp=1_700_000_000_000_000_500),),
        links=(Link(PARENT, {"l": "v"}),),
        kind=SpanKind.CLIENT,
        status=Status(StatusCode.ERROR, "bad"),
        start_time=1_700_000_000_000_000_000,
        end_time=1_700_000_000_000_001_000,
        instrumentation_scope=InstrumentationScope("scope", "1.0"),
    )


EXPECTED = {
    "resourceSpans": [
        {
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
            "scopeSpans": [
                {
                    "scope": {"name": "scope", "version": "1.0"},
                    "spans": [
                        {
                            "traceId": "0102030405060708090a0b0c0d0e0f10",
                            "spanId": "1112131415161718",
                            "parentSpanId": "a1a2a3a4a5a6a7a8",
                            "name": "chat m",
                            "kind": 3,
                            "startTimeUnixNano": "1700000000000000000",
                            "endTimeUnixNano": "1700000000000001000",
                            "attributes": [
                                {"key": "n", "value": {"intValue": "7"}},
                                {"key": "s", "value": {"stringValue": "x"}},
                            ],
                            "events": [
                                {
                                    "timeUnixNano": "1700000000000000500",
                                    "name": "ev",
                                    "attributes": [{"key": "k", "value": {"intValue": "1"}}],
                                }
                            ],
                            "links": [
                                {
                                    "traceId": "0102030405060708090a0b0c0d0e0f10",
                                    "spanId": "a1a2a3a4a5a6a7a8",
                                    "attributes": [{"key": "l", "value": {"stringValue": "v"}}],
                                    "flags": 256,
                                }
                            ],
                            "status": {"message": "bad", "code": 2},
                            "flags": 256,
                        }
                    ],
                }
            ],
        }
    ]
}


def protobuf_otlp_json(spans: Sequence[ReadableSpan]) -> str:
    """The reference: the OTLP exporter's protobuf encoder, `MessageToDict`, ids rewritten to hex.

    `encode_otlp_json` must write exactly this text, byte for byte.
    """
    request = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource_spans in request.get("resourceSpans", ()):
        for scope_spans in resource_spans.get("scopeSpans", ()):
            for span in scope_spans.get("spans", ()):
                records = [span, *span.get("links", ())]
                for record in records:
                    for name in ("traceId", "spanId", "parentSpanId"):
                        if record.get(name):
                            record[name] = base64.b64decode(record[name]).hex()
    return json.dumps(request, ensure_ascii=False, separators=(",", ":"))


REMOTE = SpanContext(TRACE_ID, 0xB1B2B3B4B5B6B7B8, True, TraceFlags(1))
STATEFUL = SpanContext(TRACE_ID, 0x21, False, TraceFlags(1), TraceState([("a", "b"), ("c", "d")]))


def span_with(**fields) -> ReadableSpan:
    base = {
        "name": "s",
        "context": CONTEXT,
        "resource": Resource({"service.name": "svc"}, schema_url="https://schema/1"),
        "status": Status(StatusCode.UNSET),
    }
    return ReadableSpan(**{**base, **fields})


EDGE_ATTRIBUTES = {
    "empty": "",
    "zero": 0,
    "negative": -5,
    "float": 0.1,
    "zero.float": 0.0,
    "negative.zero": -0.0,
    "huge.float": 1e300,
    "nan": math.nan,
    "inf": math.inf,
    "-inf": -math.inf,
    "false": False,
    "empty.tuple": (),
    "mixed.tuple": (None, "x", 1, 2.5, True),
    "list": [1.5, 2.5],
    "bytes": b"\x00\x01\xff",
    "mapping": {"k": 1, 2: "v", "nested": {"a": [1, {"b": None}]}},
    "": "empty key",
    "none": None,
    "enum": StatusCode.ERROR,
    "str.enum": SpanKind.CLIENT.name,
    "escapes": 'ü ñ \u2028 \x7f \x00 " \\ / \n\t',
}
"""Every kind of value protobuf's JSON mapping treats specially, and some it does not."""

EDGE_CASES = {
    "the fixed span": [fixed_span()],
    "edge attribute values": [span_with(attributes=EDGE_ATTRIBUTES)],
    "trace state, remote parent, unset times, scope schema and attributes": [
        span_with(
            context=STATEFUL,
            parent=REMOTE,
            kind=SpanKind.SERVER,
            start_time=0,
            end_time=None,
            instrumentation_scope=InstrumentationScope("n", None, "https://s", {"sa": 1}),
        )
    ],
    "empty event, event without attributes, links with and without attributes": [
        span_with(
            events=(Event("", {}, 0), Event("e", None, 5)),
            links=(Link(REMOTE, None), Link(CONTEXT, {"a": 1})),
            status=Status(StatusCode.OK, ""),
            instrumentation_scope=InstrumentationScope("", ""),
        )
    ],
    "a parent whose span id is zero, an error status": [
        span_with(
            parent=SpanContext(TRACE_ID, 0, False),
            status=Status(StatusCode.ERROR, "failed: ü"),
        )
    ],
    "every kind, no name": [span_with(name="", kind=kind) for kind in SpanKind],
    "grouped by equal resources and scopes, in order of first appearance": [
        span_with(resource=Resource({"r": 1})),
        span_with(instrumentation_scope=InstrumentationScope("a", "1")),
        span_with(resource=Resource({})),
        span_with(
            resource=Resource({"r": 1}), instrumentation_scope=InstrumentationScope("a", "1")
        ),
        span_with(instrumentation_scope=InstrumentationScope("a", "1")),
    ],
}


class TestEncodeOtlpJson:
    def test_matches_the_otlp_json_encoding(self):
        """Hex ids, lowerCamelCase names, integer enums, int64 as decimal strings (OTLP/JSON)."""
        assert EXPECTED == json.loads(encode_otlp_json([fixed_span()]))

    def test_is_one_line(self):
        """A request is a single line, so a file holds one request per line."""
        assert "\n" not in encode_otlp_json([fixed_span(), fixed_span("other\nname")])

    @pytest.mark.parametrize("spans", EDGE_CASES.values(), ids=EDGE_CASES.keys())
    def test_is_what_the_protobuf_encoder_writes(self, spans):
        """The text is byte for byte the protobuf encoder's through `MessageToDict`, hex ids."""
        assert protobuf_otlp_json(spans) == encode_otlp_json(spans)

    async def test_a_whole_turn_is_what_the_protobuf_encoder_writes(self, run_scenario):
        """The spans of a real turn (every kind, events, errors, receipts) encode the same."""
        from .test_tracing import Traced, call, scenario

        traced = Traced()
        await run_scenario(
            scenario(
                [call("c1", "Paris"), call("c2", "Leaky"), call("c3", "Nowhere")],
                [call("c4", "Paris", name="invented")],
                receipts={"enabled": True},
            ),
            observer=traced.observer,
        )
        spans = traced.spans
        assert len(spans) > 5
        assert protobuf_otlp_json(spans) == encode_otlp_json(spans)

    def test_an_attribute_protobuf_cannot_encode_is_skipped(self, caplog):
        """An unsupported type, an integer beyond int64, or text that is not UTF-8: the
        attribute is skipped and logged without its value, the rest of the span is kept."""
        attributes = {"object": object(), "big": 2**63, "surrogate": "a\ud800b", "ok": "x"}
        spans = [span_with(attributes={**attributes, "list": ["a", "b\udc00"]})]
        with caplog.at_level(logging.WARNING, "zeroclaw_obs.observability.traces.otlp_json"):
            encoded = encode_otlp_json(spans)
        assert protobuf_otlp_json(spans) == encoded
        assert [{"key": "ok", "value": {"stringValue": "x"}}] == (
            json.loads(encoded)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
        )
        ours = [r.getMessage() for r in caplog.records if r.name.startswith("zeroclaw_obs")]
        assert 4 == len(ours)
        assert not [m for m in ours if "ud800" in m or "2**63" in m or "object at" in m]

    def test_a_name_that_is_not_utf8_fails_the_request(self):
        """Text that is not UTF-8 outside an attribute fails the request, as in protobuf."""
        with pytest.raises(UnicodeEncodeError):
            encode_otlp_json([span_with(name="x\ud800")])


@pytest.fixture
def provider_to(tmp_path):
    providers = []

    def build(exporter):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        providers.append(provider)
        return provider

    yield build
    for provider in providers:
        provider.shutdown()


class TestOtlpJsonFileExporter:
    def test_no_file_before_the_first_export(self, tmp_path):
        """Nothing is created until spans are exported (an invalid run changes no file)."""
        path = tmp_path / "t.jsonl"
        exporter = OtlpJsonFileExporter(path)
        assert SpanExportResult.SUCCESS == exporter.export([])
        exporter.shutdown()
        assert not path.exists()

    def test_one_line_per_export_appended(self, tmp_path):
        """Each export appends one request line; a second exporter appends after the first."""
        path = tmp_path / "t.jsonl"
        for _ in range(2):
            exporter = OtlpJsonFileExporter(path)
            assert SpanExportResult.SUCCESS == exporter.export([fixed_span()])
            assert SpanExportResult.SUCCESS == exporter.export([fixed_span(), fixed_span()])
            exporter.shutdown()
        lines = path.read_text().splitlines()
        assert [1, 2, 1, 2] == [
            len(json.loads(x)["resourceSpans"][0]["scopeSpans"][0]["spans"]) for x in lines
        ]

    def test_concurrent_exports_write_whole_lines(self, tmp_path):
        """Exports from many threads never interleave inside a line."""
        path = tmp_path / "t.jsonl"
        exporter = OtlpJsonFileExporter(path)
        threads = [
            threading.Thread(target=lambda: [exporter.export([fixed_span()]) for _ in range(20)])
            for _ in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        exporter.shutdown()
        assert 160 == len(read_otlp_json(path))

    def test_unwritable_path_is_a_failure_not_an_exception(self, tmp_path):
        """A path that cannot be opened gives `FAILURE`; nothing is raised."""
        exporter = OtlpJsonFileExporter(tmp_path / "missing-dir" / "t.jsonl")
        assert SpanExportResult.FAILURE == exporter.export([fixed_span()])

    def test_a_span_it_cannot_encode_is_a_failure(self, tmp_path):
        """A span the OTLP encoder rejects gives `FAILURE`; nothing is written or raised."""
        path = tmp_path / "t.jsonl"
        exporter = OtlpJsonFileExporter(path)
        assert SpanExportResult.FAILURE == exporter.export([span_with(name="x\ud800")])
        exporter.shutdown()
        assert not path.exists()

    def test_a_removed_staged_file_is_not_created_again(self, tmp_path):
        """A file that existed when the exporter was made (a staged temp file) and was then
        removed (an interrupted run discarding it) is not created again by a late export."""
        path = tmp_path / ".t.jsonl.tmp"
        path.touch()
        exporter = OtlpJsonFileExporter(path)
        path.unlink()
        assert SpanExportResult.FAILURE == exporter.export([fixed_span()])
        exporter.shutdown()
        assert not path.exists()

    def test_after_shutdown_is_a_failure(self, tmp_path):
        """An export after `shutdown` gives `FAILURE`."""
        exporter = OtlpJsonFileExporter(tmp_path / "t.jsonl")
        exporter.shutdown()
        assert SpanExportResult.FAILURE == exporter.export([fixed_span()])


class TestReadOtlpJson:
    def test_round_trip(self, tmp_path, provider_to):
        """Spans written by the exporter read back with hex ids, parents, attributes and events."""
        path = tmp_path / "t.jsonl"
        tracer = provider_to(OtlpJsonFileExporter(path)).get_tracer("test")
        root = tracer.start_span("root", attributes={"a": 1, "b": "two", "c": [1.5, 2.5]})
        child = tracer.start_span(
            "child", context=trace.set_span_in_context(root), kind=SpanKind.CLIENT
        )
        child.add_event("ev", {"k": True}, timestamp=5)
        child.set_status(Status(StatusCode.ERROR, "boom"))
        child.end(end_time=20)
        root.end()
        child_read, root_read = read_otlp_json(path)
        assert {
            "trace_id": format(root.get_span_context().trace_id, "032x"),
            "span_id": format(child.get_span_context().span_id, "016x"),
            "parent_span_id": format(root.get_span_context().span_id, "016x"),
            "name": "child",
            "kind": 3,
            "events": [{"name": "ev", "time_unix_nano": 5, "attributes": {"k": True}}],
            "status": {"code": 2, "message": "boom"},
            "end_time_unix_nano": 20,
            "scope": "test",
        }.items() <= child_read.items()
        assert {"a": 1, "b": "two", "c": [1.5, 2.5]} == root_read["attributes"]
        assert None is root_read["parent_span_id"]
        assert "python" == root_read["resource"]["telemetry.sdk.language"]

    def test_a_bad_line_names_its_number(self, tmp_path):
        """A line that is not an OTLP/JSON request raises `ValueError` naming the line."""
        path = tmp_path / "t.jsonl"
        path.write_text(encode_otlp_json([fixed_span()]) + "\n\nnot json\n")
        with pytest.raises(ValueError, match=r"t\.jsonl:3:"):
            read_otlp_json(path)
