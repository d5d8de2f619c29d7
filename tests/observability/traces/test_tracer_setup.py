"""Tracing set-up from config and the standard `OTEL_*` variables."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import (
    ALWAYS_OFF,
    DEFAULT_ON,
    ParentBasedTraceIdRatio,
    TraceIdRatioBased,
)

from zeroclaw_obs.errors import ConfigError
from zeroclaw_obs.observability.batching import BoundedBatchSpanProcessor
from zeroclaw_obs.observability.health import TelemetryHealth
from zeroclaw_obs.observability.traces.otlp_json import OtlpJsonFileExporter, read_otlp_json
from zeroclaw_obs.observability.traces.otlp_proto_http import OtlpProtoSpanExporter as HttpExporter
from zeroclaw_obs.observability.traces.tracer_setup import (
    ContentCapture,
    build_resource,
    build_span_exporters,
    build_tracer_provider,
    content_capture_from_env,
    message_capture_from_env,
    otlp_destination,
    resolve_otlp_endpoint,
    sampler_from_env,
    shutdown_tracing,
)
from zeroclaw_obs.redaction import Redactor

SECRET = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"


@pytest.fixture(autouse=True)
def _no_otel_environment(monkeypatch):
    """The SDK also reads the process environment: keep the developer's shell out of tests."""
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)


def exporters(env: dict, **kwargs) -> list[SpanExporter]:
    built = build_span_exporters(env=env, **kwargs)
    for exporter in built:
        if isinstance(exporter, GrpcExporter | HttpExporter):
            exporter.shutdown()
    return built


class TestContentCapture:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (None, ContentCapture.REDACTED),
            ("NO_CONTENT", ContentCapture.NONE),
            ("false", ContentCapture.NONE),
            ("SPAN_ONLY", ContentCapture.REDACTED),
            ("true", ContentCapture.REDACTED),
        ],
    )
    def test_from_env(self, value, expected):
        """`NO_CONTENT` (or `false`) selects `none`; anything else is `redacted`, never raw."""
        env = {} if value is None else {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": value}
        assert expected == content_capture_from_env(env)

    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (None, False),
            ("NO_CONTENT", False),
            ("true", False),
            ("SPAN_ONLY", True),
            ("span_and_event", True),
        ],
    )
    def test_messages_only_when_asked_for_on_spans(self, value, expected):
        """`SPAN_ONLY` / `SPAN_AND_EVENT` put redacted messages on `chat` spans; nothing else."""
        env = {} if value is None else {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": value}
        assert expected is message_capture_from_env(env)


class TestResource:
    def test_default_service_name(self):
        """Without config or variables the service is `zeroclaw-obs`."""
        assert "zeroclaw-obs" == build_resource(None, {}).attributes["service.name"]

    def test_precedence(self):
        """`OTEL_SERVICE_NAME` beats `OTEL_RESOURCE_ATTRIBUTES`, which beats the config."""
        env = {"OTEL_RESOURCE_ATTRIBUTES": "service.name=attr,deployment.environment=prod%20eu"}
        attributes = build_resource("config", env).attributes
        assert ("attr", "prod eu") == (
            attributes["service.name"],
            attributes["deployment.environment"],
        )
        env["OTEL_SERVICE_NAME"] = "env"
        assert "env" == build_resource("config", env).attributes["service.name"]
        assert "config" == build_resource("config", {}).attributes["service.name"]


class TestSampler:
    def test_default_is_parent_based_always_on(self):
        """No variable: `parentbased_always_on`."""
        assert DEFAULT_ON is sampler_from_env({})

    def test_named_samplers(self):
        """`always_off` and the ratio samplers with their argument."""
        assert ALWAYS_OFF is sampler_from_env({"OTEL_TRACES_SAMPLER": "always_off"})
        ratio = sampler_from_env(
            {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25"}
        )
        assert (TraceIdRatioBased, 0.25) == (type(ratio), ratio.rate)
        parent = sampler_from_env({"OTEL_TRACES_SAMPLER": "parentbased_traceidratio"})
        assert ParentBasedTraceIdRatio is type(parent)

    @pytest.mark.parametrize(
        ("env", "message"),
        [
            ({"OTEL_TRACES_SAMPLER": "sometimes"}, "OTEL_TRACES_SAMPLER: expected one of"),
            (
                {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"},
                "OTEL_TRACES_SAMPLER_ARG: expected a ratio in",
            ),
        ],
    )
    def test_invalid_values_name_the_variable(self, env, message):
        """An unknown sampler or a bad ratio raises `ConfigError` naming the variable only."""
        with pytest.raises(ConfigError, match=message) as raised:
            sampler_from_env(env)
        value = env.get("OTEL_TRACES_SAMPLER_ARG", env["OTEL_TRACES_SAMPLER"])
        assert value not in str(raised.value)

    def test_the_sampler_takes_effect(self):
        """`OTEL_TRACES_SAMPLER=always_off` reaches the provider: spans are not recorded."""
        env = {"OTEL_TRACES_SAMPLER": "always_off", "OTEL_TRACES_EXPORTER": "none"}
        provider = build_tracer_provider(redactor=Redactor(), health=TelemetryHealth(), env=env)
        assert not provider.get_tracer("t").start_span("s").is_recording()
        provider.shutdown()


class TestEndpoint:
    @pytest.mark.parametrize(
        ("env", "protocol", "expected"),
        [
            ({}, "http/protobuf", "http://localhost:4318/v1/traces"),
            ({}, "grpc", "http://localhost:4317"),
            (
                {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318/"},
                "http/protobuf",
                "http://collector:4318/v1/traces",
            ),
            (
                {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317"},
                "grpc",
                "http://collector:4317",
            ),
            (
                {
                    "OTEL_EXPORTER_OTLP_ENDPOINT": "http://ignored:4318",
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:9/custom",
                },
                "http/protobuf",
                "http://c:9/custom",
            ),
        ],
    )
    def test_resolution(self, env, protocol, expected):
        """The signal endpoint is used as is; the base endpoint gets `/v1/traces` for HTTP."""
        assert expected == resolve_otlp_endpoint(env, protocol)


class TestExporterSelection:
    def test_default_is_otlp_http(self):
        """No variables: one OTLP/HTTP protobuf exporter (the specification's default
        protocol), the SDK's with our encoder."""
        assert [HttpExporter] == [type(e) for e in exporters({})]

    def test_grpc_protocol(self):
        """`OTEL_EXPORTER_OTLP_PROTOCOL=grpc` selects the gRPC exporter."""
        assert [GrpcExporter] == [
            type(e) for e in exporters({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"})
        ]

    def test_traces_protocol_wins(self):
        """The traces-specific protocol overrides the general one."""
        env = {
            "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
        }
        assert [HttpExporter] == [type(e) for e in exporters(env)]

    def test_console_and_none(self):
        """`console` writes to the console; `none` selects nothing."""
        env = {"OTEL_TRACES_EXPORTER": "console"}
        assert [ConsoleSpanExporter] == [type(e) for e in exporters(env)]
        assert [] == exporters({"OTEL_TRACES_EXPORTER": "none"})
        assert [ConsoleSpanExporter] == [
            type(e) for e in exporters({"OTEL_TRACES_EXPORTER": "none"}, console=True)
        ]

    def test_otlp_json_replaces_only_the_default_otlp(self, tmp_path):
        """With `--otlp-json` the file replaces OTLP by default; OTLP asked for by name or by
        endpoint is kept beside the file."""
        path = tmp_path / "t.jsonl"
        default = exporters({}, otlp_json_path=path)
        named = exporters({"OTEL_TRACES_EXPORTER": "otlp,console"}, otlp_json_path=path)
        pointed = exporters(
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, otlp_json_path=path
        )
        assert [OtlpJsonFileExporter] == [type(e) for e in default]
        assert [OtlpJsonFileExporter, HttpExporter, ConsoleSpanExporter] == [type(e) for e in named]
        assert [OtlpJsonFileExporter, HttpExporter] == [type(e) for e in pointed]

    @pytest.mark.parametrize(
        ("env", "expected"),
        [
            ({}, "http://localhost:4318/v1/traces"),
            ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}, "http://c:4318/v1/traces"),
            ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c/t"}, "http://c/t"),
            ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "http://localhost:4317"),
        ],
    )
    def test_the_destination_a_person_reads(self, env, expected):
        assert expected == otlp_destination(env)

    @pytest.mark.parametrize(
        ("env", "message"),
        [
            ({"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER: expected otlp"),
            ({"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "OTEL_EXPORTER_OTLP_PROTOCOL: expected"),
            ({"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}, "OTEL_EXPORTER_OTLP_TIMEOUT: expected"),
            ({"OTEL_EXPORTER_OTLP_TIMEOUT": "nan"}, "OTEL_EXPORTER_OTLP_TIMEOUT: expected"),
            ({"OTEL_EXPORTER_OTLP_TIMEOUT": "inf"}, "OTEL_EXPORTER_OTLP_TIMEOUT: expected"),
            ({"OTEL_BSP_MAX_QUEUE_SIZE": "-1"}, "OTEL_BSP_MAX_QUEUE_SIZE: expected a positive"),
        ],
    )
    def test_invalid_values_name_the_variable(self, env, message):
        """An invalid variable raises `ConfigError` naming it, never its value."""
        with pytest.raises(ConfigError, match=message) as raised:
            build_tracer_provider(redactor=Redactor(), health=TelemetryHealth(), env=env)
        for value in env.values():
            assert value not in str(raised.value).removeprefix(next(iter(env)))


class TestBuildTracerProvider:
    def test_sdk_disabled(self):
        """`OTEL_SDK_DISABLED=true` gives no provider at all."""
        env = {"OTEL_SDK_DISABLED": "true"}
        assert None is build_tracer_provider(redactor=Redactor(), health=TelemetryHealth(), env=env)

    def test_every_exporter_is_guarded(self, tmp_path):
        """A user span with a secret reaches the file scrubbed, with the configured service."""
        path = tmp_path / "t.jsonl"
        provider = build_tracer_provider(
            service_name="svc",
            otlp_json_path=path,
            redactor=Redactor(),
            health=TelemetryHealth(),
            env={},
        )
        provider.get_tracer("user").start_span("user", attributes={"k": SECRET}).end()
        assert shutdown_tracing(provider, timeout_s=5)
        (span,) = read_otlp_json(path)
        assert ("[REDACTED:github_token]", "svc") == (
            span["attributes"]["k"],
            span["resource"]["service.name"],
        )
        assert SECRET not in path.read_text()

    def test_batch_variables_are_honoured(self, tmp_path):
        """`OTEL_BSP_*` size the bounded queue: a queue of one drops the second span."""
        env = {"OTEL_BSP_MAX_QUEUE_SIZE": "1", "OTEL_BSP_SCHEDULE_DELAY": "60000"}
        health = TelemetryHealth()
        provider = build_tracer_provider(
            otlp_json_path=tmp_path / "t.jsonl", redactor=Redactor(), health=health, env=env
        )
        for name in ("a", "b"):
            provider.get_tracer("t").start_span(name).end()
        assert {"traces": 1} == dict(health.snapshot().dropped)
        assert shutdown_tracing(provider)
        assert ["a"] == [s["name"] for s in read_otlp_json(tmp_path / "t.jsonl")]


class HangingExporter(SpanExporter):
    """Never returns from `export` until released."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.release.wait(10)
        return SpanExportResult.SUCCESS


class TestShutdownTracing:
    def test_none_is_a_no_op(self):
        """No provider: nothing to do, and it says so."""
        assert shutdown_tracing(None)

    def test_a_hanging_exporter_cannot_hold_exit(self):
        """Shutdown returns False at its deadline while an export hangs; it never raises."""
        hanging = HangingExporter()
        provider = TracerProvider()
        provider.add_span_processor(BoundedBatchSpanProcessor(hanging, health=TelemetryHealth()))
        provider.get_tracer("t").start_span("s").end()
        started = time.perf_counter()
        assert not shutdown_tracing(provider, timeout_s=0.2)
        assert time.perf_counter() - started < 1.0
        started = time.perf_counter()
        provider.shutdown()  # what the exit hook does next: it does not wait a second time
        assert time.perf_counter() - started < 0.5
        hanging.release.set()


class TestIdGenerator:
    def test_the_provider_is_built_with_the_handoff(self):
        """Our provider carries the deferred spans' id handoff from the start; the span
        observer's tracer reuses it instead of patching its own."""
        from zeroclaw_obs.observability.traces.span_ids import SpanIdHandoff, install_handoff

        provider = build_tracer_provider(
            redactor=Redactor(), health=TelemetryHealth(), env={"OTEL_TRACES_EXPORTER": "none"}
        )
        assert provider is not None
        tracer = provider.get_tracer("zeroclaw_obs")

        assert isinstance(provider.id_generator, SpanIdHandoff)
        assert provider.id_generator is install_handoff(tracer)
        shutdown_tracing(provider)
