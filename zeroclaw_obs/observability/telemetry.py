"""Telemetry set-up: one place that builds every exporter behind the `Observer` interface.

`setup_telemetry` assembles, for one process: the tracer provider (OTLP / OTLP-JSON file /
console, each behind the export guard and a bounded batch queue), the span observer, the
Prometheus registry and its observer (optionally served on `/metrics`), structlog JSON logs
(with stdlib logging routed through the same redacting chain), progress lines and, unless
switched off, the terminal trace tree. The fan-out order matters: the span observer runs
first so the metrics exemplars and log records of the same event can carry its trace and
span ids.

`Telemetry.shutdown` flushes with a deadline; a collector that is down or never answers costs
the turn nothing and delays exit by at most that deadline.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from opentelemetry.sdk.trace import TracerProvider
from prometheus_client import CollectorRegistry

from ..redaction import CleanTextCache, Redactor
from .chain import SignalObserver, TelemetryChain
from .health import TelemetryHealth
from .logs.logs import LineWriter, LogObserver, QueuedLogger, route_stdlib_logging
from .metrics.exposition import MetricsServer, render_metrics, serve_metrics
from .metrics.metrics import MetricsObserver
from .observer import Observer
from .progress import ProgressObserver
from .signal_queue import SignalQueue
from .trace_tree import TraceTreeObserver
from .traces.tracer_setup import (
    abandon_tracing,
    build_tracer_provider,
    content_capture_from_env,
    message_capture_from_env,
    shutdown_tracing,
)
from .traces.tracing import SpanObserver

__all__ = [
    "MCP_LOGGER",
    "Telemetry",
    "TelemetryOptions",
    "default_exporter_env",
    "setup_telemetry",
]

MCP_LOGGER = "zeroclaw_obs.mcp"
"""The stdlib logger MCP servers' stderr lines and availability reports go to."""

SERVICE_NAME = "zeroclaw-obs"


@dataclass(frozen=True, kw_only=True)
class TelemetryOptions:
    """What the command line asked for."""

    otlp_json: Path | None = None
    """Write spans as OTLP/JSON lines here instead of sending them over OTLP."""
    metrics_port: int | None = None
    """Serve `/metrics` on `metrics_host`:PORT while the process runs (0: any free port)."""
    metrics_host: str = "127.0.0.1"
    """The address `/metrics` binds (`0.0.0.0` when the scraper runs in another container)."""
    logs: TextIO | None = None
    """Write structlog JSON lines here (stdlib logging is routed through the same chain)."""
    progress: TextIO | None = None
    """Write progress lines here (None: no progress lines)."""
    console_spans: bool = False
    """Also print spans to stderr with the SDK's console exporter."""
    trace_tree: bool = True
    """Collect the terminal trace tree (`Telemetry.tree`); off, no tree observer runs."""
    capture_messages: bool = False
    """Put redacted messages on `chat` spans (the config's `capture_message_content`); the
    environment's `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY` does too."""
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))


@dataclass(kw_only=True)
class Telemetry:
    """The process's telemetry; `observer` is what the engine reports to."""

    observer: TelemetryChain
    registry: CollectorRegistry
    health: TelemetryHealth
    tree: TraceTreeObserver | None = None
    """The terminal trace tree; None when `TelemetryOptions.trace_tree` is off."""
    tracer_provider: TracerProvider | None = None
    span_observer: SpanObserver | None = None
    metrics_server: MetricsServer | None = None
    log_handler: logging.Handler | None = None
    log_stream: TextIO | None = None
    """Where log lines go; flushed at shutdown (info lines are not flushed one by one)."""
    log_queue: QueuedLogger | None = None
    """The worker that writes the observer's log lines; drained at shutdown."""
    metrics: MetricsObserver | None = None
    """The metrics observer, whose queue's worker applies the counted events (and writes the
    observer's log lines, and feeds the tree); drained at shutdown."""
    _closed: bool = False

    def metrics_text(self) -> bytes:
        """The Prometheus text exposition of the runtime's registry."""
        return render_metrics(self.registry, openmetrics=False)

    def loss_summary(self) -> str | None:
        """One line about telemetry that never reached a backend, or None when nothing was lost.

        Per signal, with why: `telemetry: 12 spans dropped (exporter timed out); …` (the
        counts of `zeroclaw_telemetry_dropped_total{signal}`).
        """
        snapshot = self.health.snapshot()
        parts = []
        for signal, noun in _LOSS_NOUNS:
            dropped = snapshot.dropped.get(signal, 0)
            failures = snapshot.export_failures.get(signal, 0)
            if not dropped and not failures:
                continue
            reasons = []
            if snapshot.timed_out.get(signal, 0):
                reasons.append("exporter timed out")
            if failures:
                reasons.append(f"{failures} failed export{'s' if failures != 1 else ''}")
            because = f" ({', '.join(reasons)})" if reasons else ""
            parts.append(f"{dropped} {noun if dropped != 1 else noun[:-1]} dropped{because}")
        if not parts:
            return None
        return (
            f"telemetry: {'; '.join(parts)} "
            "[zeroclaw_telemetry_dropped_total; check OTEL_EXPORTER_OTLP_ENDPOINT]"
        )

    def shutdown(self, timeout_s: float = 5.0) -> bool:
        """Flush spans (within `timeout_s`) and log lines, stop the metrics server, detach logging.

        Never raises and never waits longer than the deadline for an exporter. An interrupt
        (`KeyboardInterrupt`, a second Ctrl-C) ends the flush at once: every queue gives up
        (what it held is counted as lost), so nothing waits for the collector at interpreter
        exit either, and the interrupt propagates.

        Returns:
            True when every span was flushed in time.
        """
        if self._closed:
            return True
        self._closed = True
        try:
            return self._flush(timeout_s)
        except BaseException:
            self._abandon()
            raise

    def _flush(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        flushed = True
        if self.metrics is not None:
            # First: applying the queued counts (and the observer's log lines: one queue) is
            # local work, so no collector (a silent one, a Ctrl-C while waiting on it) can
            # cost the process's own metrics.
            flushed = self.metrics.shutdown(timeout_s)
        if self.span_observer is not None:
            # Pending spans are built into the provider first, then the provider exports.
            flushed = self.span_observer.shutdown(timeout_s)
        remaining = max(deadline - time.monotonic(), 0.0)
        flushed = shutdown_tracing(self.tracer_provider, remaining) and flushed
        if self.log_queue is not None:
            # The observer's lines went with the signal queue (first); lines logged straight
            # to the queue (none of the runtime's own) after the spans, within the deadline.
            flushed = self.log_queue.shutdown(timeout_s) and flushed
        if self.metrics_server is not None:
            self.metrics_server.close()
        if self.log_handler is not None:
            logging.getLogger().removeHandler(self.log_handler)
        if self.log_stream is not None:
            with contextlib.suppress(OSError, ValueError):  # a full disk, a closed stream
                self.log_stream.flush()
        return flushed

    def _abandon(self) -> None:
        """Stop every queue and server now, without waiting; never raises."""
        with contextlib.suppress(Exception):
            abandon_tracing(self.tracer_provider)
        if self.log_queue is not None:
            with contextlib.suppress(Exception):
                self.log_queue.shutdown(0.0)
        if self.metrics is not None:
            with contextlib.suppress(Exception):
                self.metrics.shutdown(0.0)
        if self.metrics_server is not None:
            with contextlib.suppress(Exception):
                self.metrics_server.close()
        if self.log_handler is not None:
            logging.getLogger().removeHandler(self.log_handler)


_SDK_LOGGERS = ("opentelemetry.sdk", "opentelemetry.exporter")
_LOSS_NOUNS = (("traces", "spans"), ("logs", "log lines"), ("metrics", "metric points"))


def _quiet_sdk_loggers() -> None:
    for name in _SDK_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
            logger.addHandler(logging.NullHandler())
        logger.propagate = False


def default_exporter_env(env: Mapping[str, str], *, otlp_json: Path | None) -> dict[str, str]:
    """The environment with OTLP export switched off unless the user asked for it.

    The OpenTelemetry default is OTLP to localhost:4318. A command-line run with no collector
    configured would then spend its exit retrying a port nobody listens on, so export over OTLP
    happens only when `OTEL_TRACES_EXPORTER` or an `OTEL_EXPORTER_OTLP_*ENDPOINT` is set.
    """
    chosen = any(
        env.get(name, "").strip()
        for name in (
            "OTEL_TRACES_EXPORTER",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        )
    )
    if chosen or otlp_json is not None:
        return dict(env)
    return {**env, "OTEL_TRACES_EXPORTER": "none"}


def setup_telemetry(
    options: TelemetryOptions,
    *,
    redactor: Redactor,
    known_tools: Callable[[str], bool] | None = None,
) -> Telemetry:
    """Build every configured exporter and the observer that feeds them.

    Raises:
        ConfigError: an `OTEL_*` variable is invalid (the message names it).
        OSError: the metrics port cannot be bound.
    """
    health = TelemetryHealth()
    # The SDK logs every failed export attempt; without a log destination those lines would
    # land on the user's terminal via logging's last resort. The failures are counted instead.
    if options.logs is None:
        _quiet_sdk_loggers()
    # One memory of clean strings for the span guard and the log processor: a receipt or a
    # call id a log line already had scanned is not scanned again on the export thread.
    clean_text = CleanTextCache(redactor)
    provider = build_tracer_provider(
        service_name=options.env.get("OTEL_SERVICE_NAME") or SERVICE_NAME,
        otlp_json_path=options.otlp_json,
        console=options.console_spans,
        redactor=clean_text,
        health=health,
        env=options.env,
    )
    span_observer = None
    signals: list[SignalObserver] = []
    observers: list[Observer] = []
    if provider is not None:
        span_observer = SpanObserver(
            provider,
            capture=content_capture_from_env(options.env),
            capture_messages=options.capture_messages or message_capture_from_env(options.env),
            health=health,
            clean_text=clean_text,
        )
    registry = CollectorRegistry(auto_describe=True)
    # One queue for metrics, log lines and the tree: the turn queues each event once.
    queue = SignalQueue(health=health)
    signals.append(queue)
    metrics = MetricsObserver(
        registry,
        known_tools=known_tools,
        health=health,
        redactor=redactor,
        # Counted off the turn's path; every read of the registry applies what is queued.
        queue=queue,
    )
    log_handler = log_queue = None
    if options.logs is not None:
        logger = LineWriter(redactor=redactor, stream=options.logs, clean_text=clean_text)
        log_queue = QueuedLogger(logger, health=health, flush=options.logs.flush)
        LogObserver(log_queue, flush=log_queue.wake, health=health, queue=queue)
        # The handler takes INFO, but libraries' loggers stay at the root's WARNING: only a
        # logger set to INFO on purpose reaches the file. Ours for MCP servers' stderr is one
        # (`tools/mcp_session.py`: each line, redacted, at INFO).
        log_handler = route_stdlib_logging(redactor, options.logs, logging.INFO)
        mcp_stderr = logging.getLogger(MCP_LOGGER)
        if mcp_stderr.level == logging.NOTSET:
            mcp_stderr.setLevel(logging.INFO)
    if options.progress is not None:
        observers.append(ProgressObserver(options.progress))
    tree = None
    if options.trace_tree:
        tree = TraceTreeObserver(queue=queue)
    server = None
    if options.metrics_port is not None:
        server = serve_metrics(registry, host=options.metrics_host, port=options.metrics_port)
    return Telemetry(
        # One ordered chain: the span step first, its ids to every signal (`chain.py`).
        observer=TelemetryChain(span_observer, signals, observers),
        registry=registry,
        health=health,
        tree=tree,
        tracer_provider=provider,
        span_observer=span_observer,
        metrics_server=server,
        log_handler=log_handler,
        log_stream=options.logs,
        log_queue=log_queue,
        metrics=metrics,
    )
