"""Tracing set-up: a `TracerProvider` from config and the standard `OTEL_*` variables.

Owns the choice of exporters (OTLP/gRPC, OTLP/HTTP protobuf with our own encoder, the
`--otlp-json` file, the console), the resource, the sampler, and the pipeline every exporter
sits in:

    span.end() → BoundedBatchSpanProcessor (bounded queue, worker thread)
               → RedactingSpanExporter (the export guard) → the exporter

Each exporter gets its own processor, queue and worker, so a slow collector never holds up
the file or the console. Variables are read from the `env` mapping given (the process
environment by default) and passed to the SDK explicitly, so a test's mapping is honoured.

Risky part: this is the only code that meets the network. A collector that is down, refuses,
or accepts and never answers must cost the turn nothing: exports run only on worker threads,
with a short timeout (`DEFAULT_EXPORT_TIMEOUT_S`), and `shutdown_tracing` has a deadline.
Invalid values raise `ConfigError` naming the variable, never its value, at start-up, before
any turn runs.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import threading
import weakref
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote, urlparse

from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider, sampling
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SpanExporter
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.util.re import parse_env_headers

from ...errors import ConfigError
from ..batching import BoundedBatchSpanProcessor
from ..health import TelemetryHealth
from .export_guard import RedactingSpanExporter, TextRedactor
from .otlp_json import OtlpJsonFileExporter
from .otlp_proto_http import OtlpProtoSpanExporter
from .span_ids import SpanIdHandoff
from .tracing import ContentCapture

__all__ = [
    "DEFAULT_EXPORT_TIMEOUT_S",
    "DEFAULT_SERVICE_NAME",
    "ContentCapture",
    "abandon_tracing",
    "build_resource",
    "build_span_exporters",
    "build_tracer_provider",
    "content_capture_from_env",
    "message_capture_from_env",
    "otlp_destination",
    "otlp_exporter_from_env",
    "otlp_requested",
    "resolve_otlp_endpoint",
    "sampler_from_env",
    "shutdown_tracing",
]

_log = logging.getLogger(__name__)

DEFAULT_SERVICE_NAME = "zeroclaw-obs"
DEFAULT_EXPORT_TIMEOUT_S = 5.0
"""Per export call, retries included (the SDK's default is 10 s). Exports never run on the
turn's path; this bounds how long a dead collector can hold a worker and a flush at exit."""
DEFAULT_SHUTDOWN_TIMEOUT_S = 5.0

_PROCESSORS: weakref.WeakKeyDictionary[TracerProvider, list[BoundedBatchSpanProcessor]] = (
    weakref.WeakKeyDictionary()
)
"""The batch processors `build_tracer_provider` installed, so a late shutdown can abandon them."""

_CAPTURE_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_PROTOCOLS = ("grpc", "http/protobuf")
_EXPORTER_NAMES = ("otlp", "console", "none")
_SAMPLERS: dict[str, sampling.Sampler] = {
    "always_on": sampling.ALWAYS_ON,
    "always_off": sampling.ALWAYS_OFF,
    "parentbased_always_on": sampling.DEFAULT_ON,
    "parentbased_always_off": sampling.DEFAULT_OFF,
}
_RATIO_SAMPLERS: dict[str, type[sampling.Sampler]] = {
    "traceidratio": sampling.TraceIdRatioBased,
    "parentbased_traceidratio": sampling.ParentBasedTraceIdRatio,
}


def content_capture_from_env(env: Mapping[str, str] = os.environ) -> ContentCapture:
    """`NONE` when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is `NO_CONTENT` (or
    `false`), else `REDACTED`: any other value asks for content, and redacted is the most
    there is."""
    value = env.get(_CAPTURE_VARIABLE, "").strip().lower()
    if value in ("no_content", "false"):
        return ContentCapture.NONE
    return ContentCapture.REDACTED


def message_capture_from_env(env: Mapping[str, str] = os.environ) -> bool:
    """Whether `chat` spans carry the redacted messages (`gen_ai.input.messages`,
    `gen_ai.output.messages`): only when the variable says `SPAN_ONLY` or
    `SPAN_AND_EVENT` (the GenAI conventions' values; opt-in, it costs a redaction of the
    whole history per provider call)."""
    value = env.get(_CAPTURE_VARIABLE, "").strip().lower()
    return value in ("span_only", "span_and_event")


def build_resource(service_name: str | None, env: Mapping[str, str] = os.environ) -> Resource:
    """The SDK's default resource plus `service.name` and `OTEL_RESOURCE_ATTRIBUTES`.

    Precedence for `service.name`: `OTEL_SERVICE_NAME`, then `service.name` in
    `OTEL_RESOURCE_ATTRIBUTES`, then `service_name` (config), then `zeroclaw-obs`: the
    deployment's variables override the file's default, as the specification intends.
    """
    attributes: dict[str, str] = {SERVICE_NAME: service_name or DEFAULT_SERVICE_NAME}
    for item in env.get("OTEL_RESOURCE_ATTRIBUTES", "").split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            attributes[key.strip()] = unquote(value.strip())
    if env.get("OTEL_SERVICE_NAME"):
        attributes[SERVICE_NAME] = env["OTEL_SERVICE_NAME"]
    return Resource.create(attributes)


def sampler_from_env(env: Mapping[str, str] = os.environ) -> sampling.Sampler:
    """The sampler `OTEL_TRACES_SAMPLER` (+ `OTEL_TRACES_SAMPLER_ARG`) names.

    Default `parentbased_always_on`.

    Raises:
        ConfigError: an unknown sampler, or a ratio outside [0, 1].
    """
    name = env.get("OTEL_TRACES_SAMPLER", "").strip().lower() or "parentbased_always_on"
    if name in _SAMPLERS:
        return _SAMPLERS[name]
    if name not in _RATIO_SAMPLERS:
        known = ", ".join([*_SAMPLERS, *_RATIO_SAMPLERS])
        raise ConfigError(f"OTEL_TRACES_SAMPLER: expected one of {known}")
    raw = env.get("OTEL_TRACES_SAMPLER_ARG", "").strip() or "1.0"
    try:
        rate = float(raw)
    except ValueError:
        rate = -1.0
    if not 0.0 <= rate <= 1.0:
        raise ConfigError("OTEL_TRACES_SAMPLER_ARG: expected a ratio in [0, 1]")
    return _RATIO_SAMPLERS[name](rate)


def resolve_otlp_endpoint(env: Mapping[str, str], protocol: str) -> str:
    """The traces endpoint, per the OTLP exporter specification.

    `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is used as is. Otherwise, for `http/protobuf`,
    `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4318`) plus `/v1/traces`; for
    `grpc`, `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4317`).
    """
    if signal := env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip():
        return signal
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    if protocol == "grpc":
        return base or "http://localhost:4317"
    return (base or "http://localhost:4318").rstrip("/") + "/v1/traces"


def otlp_exporter_from_env(env: Mapping[str, str] = os.environ) -> SpanExporter:
    """An OTLP span exporter for `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL` (default `http/protobuf`).

    Endpoint, headers, timeout and (gRPC) insecure come from `env`. Timeouts are in seconds,
    as the Python SDK reads them (the specification says milliseconds); default
    `DEFAULT_EXPORT_TIMEOUT_S`. TLS files and compression are left to the SDK, which reads
    them from the process environment.

    Raises:
        ConfigError: an unknown protocol or a timeout that is not a positive number.
    """
    protocol = (
        _first(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).lower()
    if protocol not in _PROTOCOLS:
        raise ConfigError("OTEL_EXPORTER_OTLP_PROTOCOL: expected grpc or http/protobuf")
    endpoint = resolve_otlp_endpoint(env, protocol)
    timeout = _timeout(env)
    headers = parse_env_headers(
        _first(env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS") or "",
        liberal=True,
    )
    if protocol == "grpc":
        # Imported here: grpc is heavy, and only this protocol needs it.
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcExporter,
        )

        insecure = _first(env, "OTEL_EXPORTER_OTLP_TRACES_INSECURE", "OTEL_EXPORTER_OTLP_INSECURE")
        return GrpcExporter(
            endpoint=endpoint,
            insecure=(
                insecure.lower() == "true" if insecure else urlparse(endpoint).scheme == "http"
            ),
            headers=headers or None,
            timeout=timeout,
        )
    # The SDK's HTTP exporter with our encoder (`otlp_proto_http.py`): ~5x less CPU per span.
    return OtlpProtoSpanExporter(endpoint=endpoint, headers=headers or None, timeout=timeout)


_ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def otlp_requested(env: Mapping[str, str]) -> bool:
    """Whether the environment asks for OTLP export itself: an endpoint is set, or
    `OTEL_TRACES_EXPORTER` is set (and then `build_span_exporters` reads which)."""
    return any(env.get(name, "").strip() for name in (*_ENDPOINT_VARIABLES, "OTEL_TRACES_EXPORTER"))


def otlp_destination(env: Mapping[str, str]) -> str:
    """Where OTLP spans go, for a person to read (`resolve_otlp_endpoint` for the protocol)."""
    protocol = env.get(
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", env.get("OTEL_EXPORTER_OTLP_PROTOCOL", "")
    ).strip()
    return resolve_otlp_endpoint(env, protocol or "http/protobuf")


def build_span_exporters(
    *,
    env: Mapping[str, str] = os.environ,
    otlp_json_path: Path | None = None,
    console: bool = False,
) -> list[SpanExporter]:
    """The exporters `OTEL_TRACES_EXPORTER` (`otlp|console|none`, comma list; default `otlp`)
    and the flags select. `--otlp-json` adds the file exporter and replaces the *default* OTLP
    exporter; OTLP the environment asks for by name (`OTEL_TRACES_EXPORTER` naming `otlp`, or
    an `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`) is kept beside the file, so `demo` and
    `run --otlp-json` also export where the user pointed them.

    The console exporter writes to stderr: stdout carries the turn's answer.

    Raises:
        ConfigError: an unknown exporter name, or a bad OTLP variable.
    """
    raw = env.get("OTEL_TRACES_EXPORTER", "").strip() or "otlp"
    names = {n.strip().lower() for n in raw.split(",") if n.strip()}
    unknown = sorted(names - set(_EXPORTER_NAMES))
    if unknown:
        raise ConfigError(
            f"OTEL_TRACES_EXPORTER: expected otlp, console or none ({len(unknown)} unknown name(s))"
        )
    exporters: list[SpanExporter] = []
    if otlp_json_path is not None:
        exporters.append(OtlpJsonFileExporter(otlp_json_path))
    if "otlp" in names and (otlp_json_path is None or otlp_requested(env)):
        exporters.append(otlp_exporter_from_env(env))
    if console or "console" in names:
        exporters.append(ConsoleSpanExporter(out=sys.stderr))
    return exporters


def build_tracer_provider(
    *,
    service_name: str | None = None,
    otlp_json_path: Path | None = None,
    console: bool = False,
    redactor: TextRedactor,
    health: TelemetryHealth,
    env: Mapping[str, str] = os.environ,
) -> TracerProvider | None:
    """A provider whose every exporter sits behind the export guard and a bounded batch queue.

    Honours `OTEL_SDK_DISABLED`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
    `OTEL_TRACES_SAMPLER[_ARG]`, `OTEL_TRACES_EXPORTER`, `OTEL_EXPORTER_OTLP_*` and
    `OTEL_BSP_SCHEDULE_DELAY` / `_MAX_QUEUE_SIZE` / `_MAX_EXPORT_BATCH_SIZE`. With no exporter
    selected the provider still exists: spans keep their ids for log and exemplar correlation.

    Returns:
        None when `OTEL_SDK_DISABLED=true`: the caller installs no span observer.

    Raises:
        ConfigError: a variable has an invalid value; the message names it.
    """
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    exporters = build_span_exporters(env=env, otlp_json_path=otlp_json_path, console=console)
    delay_s = _positive_int(env, "OTEL_BSP_SCHEDULE_DELAY", 5000) / 1000
    queue_size = _positive_int(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2048)
    batch_size = min(_positive_int(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512), queue_size)
    provider = TracerProvider(
        sampler=sampler_from_env(env),
        resource=build_resource(service_name, env),
        # Built with the handoff the deferred spans need, rather than patched in afterwards
        # (`install_handoff` finds it and keeps it); for every other caller it is the SDK's
        # own random generator.
        id_generator=SpanIdHandoff(RandomIdGenerator()),
    )
    processors = _PROCESSORS.setdefault(provider, [])
    for exporter in exporters:
        guarded = RedactingSpanExporter(exporter, redactor, health=health)
        processor = BoundedBatchSpanProcessor(
            guarded,
            health=health,
            max_queue_size=queue_size,
            max_export_batch_size=batch_size,
            schedule_delay_s=delay_s,
            shutdown_timeout_s=DEFAULT_SHUTDOWN_TIMEOUT_S,
        )
        provider.add_span_processor(processor)
        processors.append(processor)
    return provider


def shutdown_tracing(provider: TracerProvider | None, timeout_s: float = 5.0) -> bool:
    """Flush and shut the provider down within `timeout_s`. Never hangs, never raises.

    The work runs on a daemon thread that is abandoned at the deadline, so a collector that
    never answers cannot keep the process from exiting. At the deadline every batch processor
    of the provider gives up too, so the spans it still held are counted (dropped, timed out)
    before this returns: the exit line reports them.

    Returns:
        True when everything was flushed and shut down in time.
    """
    if provider is None:
        return True
    outcome: list[bool] = []

    def work() -> None:
        try:
            flushed = provider.force_flush(max(int(timeout_s * 1000), 0))
            provider.shutdown()
            outcome.append(bool(flushed))
        except Exception as exc:
            _log.warning("tracing shutdown failed: %s", type(exc).__name__)

    worker = threading.Thread(target=work, name="zeroclaw-tracing-shutdown", daemon=True)
    worker.start()
    worker.join(max(timeout_s, 0.0))
    if worker.is_alive():
        abandon_tracing(provider)
    return outcome == [True]


def abandon_tracing(provider: TracerProvider | None) -> None:
    """Give up on every span `provider`'s batch processors still hold, now, without waiting.

    What they held is counted as dropped and timed out; a later `shutdown` (the SDK's own at
    interpreter exit included) returns at once instead of waiting on a stuck export.
    """
    if provider is None:
        return
    for processor in _PROCESSORS.get(provider, ()):
        processor.abandon()


def _first(env: Mapping[str, str], *names: str) -> str | None:
    for name in names:
        if value := env.get(name, "").strip():
            return value
    return None


def _timeout(env: Mapping[str, str]) -> float:
    for name in ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"):
        raw = env.get(name, "").strip()
        if not raw:
            continue
        try:
            value = float(raw)
        except ValueError:
            value = 0.0
        if not math.isfinite(value) or value <= 0:
            raise ConfigError(f"{name}: expected a positive, finite number of seconds")
        return value
    return DEFAULT_EXPORT_TIMEOUT_S


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigError(f"{name}: expected a positive integer")
    return value
