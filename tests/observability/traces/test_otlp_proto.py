"""Our OTLP protobuf encoder against the SDK's (the exporter: `test_otlp_proto_http.py`)."""

from __future__ import annotations

import enum
import logging
import math
import os
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.util import BoundedList
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

from zeroclaw_obs.observability.traces.otlp_proto import (
    OtlpProtoEncoder,
    encode_otlp_proto,
)
from zeroclaw_obs.observability.traces.tracing import SpanObserver

from ...conftest import make_replay

TRACE_ID = 0x0102030405060708090A0B0C0D0E0F10
CONTEXT = SpanContext(TRACE_ID, 0x1112131415161718, False, TraceFlags(1))
PARENT = SpanContext(TRACE_ID, 0xA1A2A3A4A5A6A7A8, False, TraceFlags(1))
REMOTE = SpanContext(TRACE_ID, 0xB1B2B3B4B5B6B7B8, True, TraceFlags(1))
STATEFUL = SpanContext(TRACE_ID, 0x21, False, TraceFlags(1), TraceState([("a", "b"), ("c", "d")]))


@pytest.fixture(autouse=True)
def _no_otel_environment(monkeypatch):
    """The SDK exporter reads the process environment: keep the developer's shell out."""
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)


def sdk_bytes(spans: Sequence[ReadableSpan]) -> bytes:
    """The reference: what the SDK's OTLP/HTTP exporter sends."""
    return encode_spans(spans).SerializePartialToString()


def assert_same_as_sdk(spans: Sequence[ReadableSpan]) -> None:
    """The same bytes as the SDK's encoder, and they decode to an equal message."""
    ours = encode_otlp_proto(spans)
    reference = sdk_bytes(spans)
    assert encode_spans(spans) == ExportTraceServiceRequest.FromString(ours)
    assert reference == ours


def span_with(**fields) -> ReadableSpan:
    base = {
        "name": "s",
        "context": CONTEXT,
        "resource": Resource({"service.name": "svc"}, schema_url="https://schema/1"),
        "status": Status(StatusCode.UNSET),
    }
    return ReadableSpan(**{**base, **fields})


class Level(enum.IntEnum):
    HIGH = 3


class Name(str):
    pass


EDGE_ATTRIBUTES = {
    "empty": "",
    "zero": 0,
    "negative": -5,
    "min.int64": -(2**63),
    "max.int64": 2**63 - 1,
    "float": 0.1,
    "zero.float": 0.0,
    "negative.zero": -0.0,
    "nan": math.nan,
    "inf": math.inf,
    "-inf": -math.inf,
    "false": False,
    "true": True,
    "empty.tuple": (),
    "mixed.tuple": (None, "x", 1, 2.5, True),
    "nested": ((1, 2), ("a",), ()),
    "list": [1.5, 2.5],
    "bytes": b"\x00\x01\xff",
    "empty.bytes": b"",
    "bytearray": bytearray(b"\x01\x02"),
    "mapping": {"k": 1, 2: "v", "nested": {"a": [1, {"b": None}]}},
    "": "empty key",
    "none": None,
    "int.enum": Level.HIGH,
    "str.subclass": Name("n"),
    "long": "x" * 300,
    "unicode": "ü ñ \u2028 \x7f \x00 😀",
}
"""Every kind of value the SDK's encoder reads, and the defaults protobuf treats specially."""

EDGE_CASES = {
    "edge attribute values": [span_with(attributes=EDGE_ATTRIBUTES)],
    "events, links, error status, client kind, times": [
        span_with(
            parent=PARENT,
            kind=SpanKind.CLIENT,
            start_time=1_700_000_000_000_000_000,
            end_time=1_700_000_000_000_001_000,
            events=(Event("ev", {"k": 1}, timestamp=1_700_000_000_000_000_500),),
            links=(Link(PARENT, {"l": "v"}),),
            status=Status(StatusCode.ERROR, "bad: ü"),
            instrumentation_scope=InstrumentationScope("scope", "1.0"),
        )
    ],
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
    "empty event, event without attributes, remote and local links": [
        span_with(
            events=(Event("", {}, 0), Event("e", None, 5)),
            links=(Link(REMOTE, None), Link(CONTEXT, {"a": 1})),
            status=Status(StatusCode.OK),
            instrumentation_scope=InstrumentationScope("", ""),
        )
    ],
    "a parent whose span id is zero": [span_with(parent=SpanContext(TRACE_ID, 0, False))],
    "every kind, no name": [span_with(name="", kind=kind) for kind in SpanKind],
    "dropped attributes, events and links": [
        span_with(
            attributes=BoundedAttributes(2, {"a": 1, "b": 2, "c": 3, "d": 4}),
            events=BoundedList.from_seq(1, [Event("e1"), Event("e2"), Event("e3")]),
            links=BoundedList.from_seq(1, [Link(PARENT), Link(REMOTE)]),
        ),
        span_with(events=(Event("e", BoundedAttributes(1, {"a": 1, "b": 2})),)),
    ],
    "grouped by equal resources and scopes, in order of first appearance": [
        span_with(resource=Resource({"r": 1})),
        span_with(instrumentation_scope=InstrumentationScope("a", "1")),
        span_with(resource=Resource({})),
        span_with(
            resource=Resource({"r": 1}), instrumentation_scope=InstrumentationScope("a", "1")
        ),
        span_with(instrumentation_scope=InstrumentationScope("a", "1")),
    ],
    "no spans": [],
}


class TestEncodeOtlpProto:
    @pytest.mark.parametrize("spans", EDGE_CASES.values(), ids=EDGE_CASES.keys())
    def test_is_what_the_sdk_encoder_writes(self, spans):
        """Byte for byte the SDK's `encode_spans(...).SerializePartialToString()`."""
        assert_same_as_sdk(spans)

    async def test_a_whole_turn_is_what_the_sdk_encoder_writes(self):
        """The spans of a real turn (every kind, events, errors, receipts) encode the same."""
        provider = TracerProvider(resource=Resource({"service.name": "t"}))
        memory = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(memory))
        observer = SpanObserver(provider)
        replay = make_replay(TURN, observer=observer, receipt_key=bytes(32))
        await replay.run()
        observer.shutdown()
        spans = memory.get_finished_spans()
        assert 5 < len(spans)
        assert_same_as_sdk(spans)

    def test_an_attribute_the_sdk_cannot_encode_is_skipped_and_logged_without_value(self, caplog):
        """An unsupported type, an integer beyond int64, text that is not UTF-8 (also as an
        array item, a key, or a long text or its key): the attribute is skipped, the rest of
        the span is kept."""
        attributes = {
            "object": object(),
            "big": 2**63,
            "small": -(2**63) - 1,
            "surrogate": "a\ud800b",
            "list": ["a", "b\udc00"],
            "key\ud800": "v",
            "enum": StatusCode.ERROR,
            "long surrogate": "a" * 100 + "\ud800",
            "long key\ud800": "b" * 100,
            "ok": "x",
        }
        spans = [span_with(attributes=attributes)]
        with caplog.at_level(logging.WARNING, "zeroclaw_obs.observability.traces.otlp_proto"):
            encoded = encode_otlp_proto(spans)
        assert sdk_bytes(spans) == encoded
        request = ExportTraceServiceRequest.FromString(encoded)
        (span,) = request.resource_spans[0].scope_spans[0].spans
        assert ["ok"] == [pair.key for pair in span.attributes]
        ours = [r.getMessage() for r in caplog.records if r.name.startswith("zeroclaw_obs")]
        assert 9 == len(ours)
        assert not [m for m in ours if "ud800" in m or "2**63" in m or "object at" in m]

    @pytest.mark.parametrize(
        "span",
        [
            span_with(name="x\ud800"),
            span_with(status=Status(StatusCode.ERROR, "x\ud800")),
            span_with(events=(Event("x\ud800"),)),
            span_with(start_time=-1),
            span_with(kind="not a kind"),
        ],
        ids=["name", "status message", "event name", "negative time", "kind"],
    )
    def test_what_the_sdk_cannot_encode_outside_attributes_fails_the_request(self, span):
        """Such text or values outside an attribute fail the request, as in protobuf."""
        with pytest.raises(Exception):  # noqa: B017 - the SDK's encoder raises several types
            sdk_bytes([span])
        with pytest.raises(Exception):  # noqa: B017
            encode_otlp_proto([span])

    def test_repeated_encodings_are_the_same(self):
        """What the encoder remembers between requests never changes what it writes."""
        encoder = OtlpProtoEncoder()
        spans = [span_with(attributes={"k": "v", "n": 1, "b": True, "f": -0.0})]
        other = [span_with(attributes={"k": "w", "n": True, "b": 1, "f": 0.0})]
        for _ in range(3):
            assert sdk_bytes(spans) == encoder.encode(spans)
            assert sdk_bytes(other) == encoder.encode(other)

    def test_the_memory_serves_a_string_pair_to_strings_only(self):
        """A remembered `(key, "1")` is never written for 1, True or 1.0 under that key, a str
        subclass is written as its string, and an unhashable value among remembered ones is
        written by its type: the SDK's bytes, whatever the encoder saw before."""
        encoder = OtlpProtoEncoder()
        rounds = [
            {"k": "1", "t": "True", "l": "x"},
            {"k": 1, "t": True, "l": ["x"]},
            {"k": 1.0, "t": 1, "l": ("x",)},
            {"k": Name("1"), "t": "True", "l": {"x": "x"}},
            {"k": "1", "t": "True", "l": "x"},
        ]
        for attributes in rounds * 2:
            spans = [span_with(attributes=attributes)]
            assert sdk_bytes(spans) == encoder.encode(spans)

    @pytest.mark.parametrize("size", [65, 125, 126, 127, 128, 16378, 16380, 16381, 16384, 20000])
    def test_a_long_text_of_any_size_is_written_with_its_sizes(self, size):
        """Around the sizes where a text's size, or its value's, takes one more varint byte:
        the SDK's bytes, from a fresh encoder and from one that wrote that size before."""
        encoder = OtlpProtoEncoder()
        for text in ("a" * size, "b" * size, "é" * (size // 2)):
            spans = [span_with(attributes={"k": text, "same": text})]
            assert sdk_bytes(spans) == encoder.encode(spans) == encode_otlp_proto(spans)

    def test_a_status_shared_by_spans_is_written_for_each(self):
        """Spans sharing one `Status` object (as the runtime's do), then others, with and
        without a description, one after the other: each span's status as the SDK writes it."""
        unset, error = Status(StatusCode.UNSET), Status(StatusCode.ERROR, "boom")
        statuses = [unset, unset, error, error, unset, Status(StatusCode.OK), unset, None]
        spans = [span_with(status=status, start_time=5, end_time=9) for status in statuses]
        encoder = OtlpProtoEncoder()
        for _ in range(2):
            assert sdk_bytes(spans[:-1]) == encoder.encode(spans[:-1])
            assert encode_otlp_proto(spans) == encoder.encode(spans)

    def test_a_long_text_under_two_keys_is_written_under_each(self):
        """The same long text object under two keys, an equal copy under a third, and another
        text between them: each pair as the SDK's encoder writes it."""
        text = "a" * 200 + " ü"
        copy = "".join(["a" * 200, " ü"])
        attributes = {"args": text, "input": text, "other": "b" * 300, "copy": copy, "again": text}
        encoder = OtlpProtoEncoder()
        for _ in range(2):
            spans = [span_with(attributes=attributes), span_with(attributes={"input": text})]
            assert sdk_bytes(spans) == encoder.encode(spans)


def values(text):
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**64), max_value=2**64),
        st.floats(allow_nan=False),
        text,
        st.binary(max_size=8),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.lists(inner, max_size=3).map(tuple),
            st.dictionaries(text, inner, max_size=3),
        ),
        max_leaves=6,
    )


ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=12)
"""Text with lone surrogates too: the encoders must agree on what they cannot encode."""
TEXT = st.text(max_size=12)
ATTRIBUTES = st.dictionaries(ANY_TEXT, values(ANY_TEXT), max_size=5)
CONTEXTS = st.builds(
    SpanContext,
    trace_id=st.integers(1, 2**128 - 1),
    span_id=st.integers(1, 2**64 - 1),
    is_remote=st.booleans(),
    trace_flags=st.sampled_from([TraceFlags(0), TraceFlags(1)]),
    trace_state=st.one_of(
        st.none(),
        st.lists(
            st.tuples(
                st.from_regex(r"[a-z]{1,5}", fullmatch=True),
                st.from_regex(r"[a-z0-9]{1,5}", fullmatch=True),
            ),
            max_size=2,
        ).map(TraceState),
    ),
)
TIMES = st.one_of(st.none(), st.integers(0, 2**64 - 1))
RESOURCES = st.sampled_from(
    [Resource({"service.name": "a"}), Resource({"service.name": "b"}, "https://s"), Resource({})]
)
SCOPES = st.sampled_from(
    [None, InstrumentationScope("a", "1"), InstrumentationScope("b", None, "https://x", {"k": 1})]
)
SPANS = st.builds(
    ReadableSpan,
    name=TEXT,
    context=CONTEXTS,
    parent=st.one_of(st.none(), CONTEXTS),
    resource=RESOURCES,
    attributes=ATTRIBUTES,
    events=st.lists(
        st.builds(
            Event,
            name=TEXT,
            attributes=st.dictionaries(TEXT, values(TEXT), max_size=3),
            timestamp=TIMES,
        ),
        max_size=2,
    ),
    links=st.lists(
        st.builds(
            Link, context=CONTEXTS, attributes=st.dictionaries(TEXT, values(TEXT), max_size=3)
        ),
        max_size=2,
    ),
    kind=st.sampled_from(list(SpanKind)),
    status=st.builds(Status, st.sampled_from(list(StatusCode)), st.one_of(st.none(), TEXT)),
    start_time=TIMES,
    end_time=TIMES,
    instrumentation_scope=SCOPES,
)


LONG_TEXTS = st.lists(
    st.text(st.characters(exclude_categories=()), min_size=60, max_size=300), min_size=1, max_size=3
)
"""Texts around and past the length the encoder remembers (lone surrogates too)."""


@st.composite
def sharing_attributes(draw):
    """Attributes whose long texts repeat as the very same objects under several keys, among
    short strings, numbers and lists, as a tool span carries its arguments and result."""
    texts = draw(LONG_TEXTS)
    keys = draw(st.lists(TEXT, min_size=1, max_size=6, unique=True))
    others = st.one_of(values(ANY_TEXT), st.sampled_from(texts))
    return {key: draw(st.one_of(st.sampled_from(texts), others)) for key in keys}


class TestEncoderProperties:
    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(sharing_attributes(), min_size=1, max_size=4))
    def test_shared_long_texts_encode_as_the_sdk_encodes_them(self, attribute_sets):
        """Long texts shared by several keys and spans, through one encoder twice: the same
        bytes as the SDK's encoder, or both fail."""
        logging.disable(logging.CRITICAL)
        try:
            spans = [span_with(attributes=attributes) for attributes in attribute_sets]
            encoder = OtlpProtoEncoder()
            for _ in range(2):
                try:
                    reference = sdk_bytes(spans)
                except Exception:
                    with pytest.raises(Exception):  # noqa: B017
                        encoder.encode(spans)
                    return
                assert reference == encoder.encode(spans)
        finally:
            logging.disable(logging.NOTSET)

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(SPANS, max_size=4))
    def test_any_spans_encode_as_the_sdk_encodes_them(self, spans):
        """Any spans, attributes of every value type, events, links, statuses, kinds, trace
        states and groups: the same bytes as the SDK's encoder, or both fail."""
        logging.disable(logging.CRITICAL)  # both encoders log every skipped attribute
        try:
            try:
                reference = sdk_bytes(spans)
            except Exception:
                with pytest.raises(Exception):  # noqa: B017
                    encode_otlp_proto(spans)
                return
            assert reference == encode_otlp_proto(spans)
        finally:
            logging.disable(logging.NOTSET)


TURN = {
    "agent": {"alias": "bot"},
    "user": "weather?",
    "config": {"approval": {"auto_approve": ["get_weather"]}, "receipts": {"enabled": True}},
    "tools": [
        {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            "responses": [
                {"when": {"city": "Nowhere"}, "error": "no such city"},
                {"default": {"output": "4C"}},
            ],
        }
    ],
    "responses": [
        {
            "tool_calls": [
                {"id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}},
                {"id": "c2", "name": "get_weather", "arguments": {"city": "Nowhere"}},
                {"id": "c3", "name": "invented", "arguments": {}},
            ]
        },
        {"text": "done"},
    ],
}
