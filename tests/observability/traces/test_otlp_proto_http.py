"""The OTLP/HTTP protobuf exporter over real loopback HTTP, alone and as the runtime's."""

from __future__ import annotations

import gzip
import logging
from collections.abc import Iterator

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import Event, TracerProvider
from opentelemetry.sdk.trace.export import SpanExportResult

from zeroclaw_obs.observability.health import TelemetryHealth
from zeroclaw_obs.observability.traces.otlp_proto_http import OtlpProtoSpanExporter
from zeroclaw_obs.observability.traces.tracer_setup import build_tracer_provider, shutdown_tracing
from zeroclaw_obs.observability.traces.tracing import SpanObserver
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.tools.base import Tool, ToolResult

from ...conftest import make_replay
from ...receivers import HttpReceiver, decode
from .test_otlp_proto import (  # noqa: F401 (an autouse fixture, active where imported)
    PARENT,
    _no_otel_environment,
    sdk_bytes,
    span_with,
)


@pytest.fixture
def receiver() -> Iterator[HttpReceiver]:
    receiver = HttpReceiver()
    yield receiver
    receiver.close()


SPANS_TO_SEND = [
    span_with(name="first", attributes={"a": "1", "n": 2}),
    span_with(name="second", parent=PARENT, events=(Event("e", {"k": True}, 7),)),
]


class TestOtlpProtoSpanExporter:
    def test_a_loopback_receiver_gets_the_spans(self, receiver):
        """One POST to /v1/traces whose body is the SDK's encoding of the same spans."""
        exporter = OtlpProtoSpanExporter(endpoint=f"{receiver.endpoint}/v1/traces", timeout=5)
        try:
            assert SpanExportResult.SUCCESS == exporter.export(SPANS_TO_SEND)
        finally:
            exporter.shutdown()
        assert [sdk_bytes(SPANS_TO_SEND)] == receiver.requests
        assert ["first", "second"] == [s["name"] for s in decode(receiver.requests)]
        assert {"a": "1", "n": 2} == decode(receiver.requests)[0]["attributes"]

    def test_the_sdk_compression_variable_is_honoured(self, receiver, monkeypatch):
        """`OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=gzip`: the body is gzip of our encoding."""
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip")
        exporter = OtlpProtoSpanExporter(endpoint=f"{receiver.endpoint}/v1/traces", timeout=5)
        try:
            assert SpanExportResult.SUCCESS == exporter.export(SPANS_TO_SEND)
        finally:
            exporter.shutdown()
        (body,) = receiver.requests
        assert sdk_bytes(SPANS_TO_SEND) == gzip.decompress(body)

    def test_a_refusing_receiver_is_a_failure(self):
        """A 400 answer reads as FAILURE (the SDK's client decides; it does not retry 400)."""
        refusing = HttpReceiver(status=400)
        exporter = OtlpProtoSpanExporter(endpoint=f"{refusing.endpoint}/v1/traces", timeout=5)
        try:
            assert SpanExportResult.FAILURE == exporter.export(SPANS_TO_SEND)
        finally:
            exporter.shutdown()
            refusing.close()

    def test_a_request_over_the_size_limit_is_not_sent(self, receiver):
        """`max_request_size` is the SDK's: a larger request is dropped before sending."""
        exporter = OtlpProtoSpanExporter(
            endpoint=f"{receiver.endpoint}/v1/traces", timeout=5, max_request_size=10
        )
        try:
            assert SpanExportResult.FAILURE == exporter.export(SPANS_TO_SEND)
        finally:
            exporter.shutdown()
        assert [] == receiver.requests

    def test_a_span_it_cannot_encode_fails_the_batch_without_quoting_it(self, receiver, caplog):
        """An unencodable name fails the export; the log line names the error type only."""
        exporter = OtlpProtoSpanExporter(endpoint=f"{receiver.endpoint}/v1/traces", timeout=5)
        secret = "hunter2\ud800"
        try:
            with caplog.at_level(logging.ERROR):
                result = exporter.export([span_with(name=secret)])
        finally:
            exporter.shutdown()
        assert SpanExportResult.FAILURE == result
        assert [] == receiver.requests
        assert not [r for r in caplog.records if "hunter2" in r.getMessage()]

    def test_after_shutdown_is_a_failure(self, receiver):
        """As the SDK's exporter: nothing is sent once shut down."""
        exporter = OtlpProtoSpanExporter(endpoint=f"{receiver.endpoint}/v1/traces", timeout=5)
        exporter.shutdown()
        assert SpanExportResult.FAILURE == exporter.export(SPANS_TO_SEND)
        assert [] == receiver.requests


SECRET = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"


class LeakyTool(Tool):
    """A tool whose own code starts a span and sets attributes with a secret in them."""

    name = "leaky"
    description = "Starts its own span."

    def __init__(self, provider: TracerProvider) -> None:
        self._tracer = provider.get_tracer("user.code")

    def parameters_schema(self) -> dict:
        return {"type": "object", "properties": {}}

    async def execute(self, args: dict) -> ToolResult:
        from opentelemetry import trace

        trace.get_current_span().set_attribute("user.note", f"token {SECRET}")
        with self._tracer.start_as_current_span("GET /secret") as span:
            span.set_attribute("http.url", f"https://x.test/?token={SECRET}")
            span.add_event("sent", {"body": SECRET})
        return ToolResult.ok("done")


LEAKY_TURN = {
    "agent": {"alias": "bot"},
    "user": "go",
    "config": {"approval": {"auto_approve": ["leaky"]}},
    "responses": [
        {"tool_calls": [{"id": "c1", "name": "leaky", "arguments": {}}]},
        {"text": "done"},
    ],
}


class TestThroughTheProvider:
    """The runtime's provider (our processors, the guard, this exporter) over real HTTP."""

    async def run(self, receiver: HttpReceiver, **env: str) -> list[dict]:
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, **env}
        provider = build_tracer_provider(redactor=Redactor(), health=TelemetryHealth(), env=env)
        observer = SpanObserver(provider)
        await make_replay(LEAKY_TURN, observer=observer, extra_tools=[LeakyTool(provider)]).run()
        assert observer.shutdown(5.0)
        assert shutdown_tracing(provider, timeout_s=5)
        assert 0 == observer.errors
        return [
            span
            for body in receiver.requests
            for resource_spans in ExportTraceServiceRequest.FromString(body).resource_spans
            for scope_spans in resource_spans.scope_spans
            for span in scope_spans.spans
        ]

    async def test_spans_from_user_code_meet_the_guard(self, receiver):
        """The tool's own span and what its code set on the tool span are redacted before
        they leave; the tool's span is the parent of the code's span."""
        spans = {s.name: s for s in await self.run(receiver)}
        assert {"GET /secret", "execute_tool leaky", "invoke_agent bot"} <= spans.keys()
        assert spans["execute_tool leaky"].span_id == spans["GET /secret"].parent_span_id
        assert not any(SECRET.encode() in body for body in receiver.requests)
        note = {a.key: a.value.string_value for a in spans["execute_tool leaky"].attributes}
        assert note["user.note"].startswith("token [REDACTED:")

    async def test_resource_attributes_and_the_sampler_apply(self, receiver):
        """`OTEL_RESOURCE_ATTRIBUTES` reach every exported span's resource; with a ratio of 0
        nothing is recorded, so nothing is sent."""
        await self.run(receiver, OTEL_RESOURCE_ATTRIBUTES="deployment.environment=test")
        for body in receiver.requests:
            for resource_spans in ExportTraceServiceRequest.FromString(body).resource_spans:
                resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                assert "test" == resource["deployment.environment"]
        assert receiver.requests
        receiver.requests.clear()
        await self.run(receiver, OTEL_TRACES_SAMPLER="traceidratio", OTEL_TRACES_SAMPLER_ARG="0")
        assert [] == receiver.requests
