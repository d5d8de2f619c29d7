"""Real OTLP export over loopback: HTTP and gRPC receivers, a dead and a silent collector."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from zeroclaw_obs.observability.health import TelemetryHealth
from zeroclaw_obs.observability.telemetry import TelemetryOptions, setup_telemetry
from zeroclaw_obs.observability.traces.tracer_setup import build_tracer_provider, shutdown_tracing
from zeroclaw_obs.observability.traces.tracing import SpanObserver
from zeroclaw_obs.redaction import Redactor

from ...conftest import make_replay
from ...receivers import GrpcReceiver, HttpReceiver, decode

SECRET = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
EXPORT_TIMEOUT_S = 3.0
WEATHER = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "responses": [
        {"when": {"city": "Paris"}, "output": f"18C {SECRET}", "delay_ms": 50},
        {"default": {"output": "4C", "delay_ms": 50}},
    ],
}
SCENARIO = {
    "agent": {"alias": "weather-bot"},
    "user": "weather?",
    "config": {"parallel_tools": True, "approval": {"auto_approve": ["get_weather"]}},
    "tools": [WEATHER],
    "responses": [
        {
            "tool_calls": [
                {"id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}},
                {"id": "c2", "name": "get_weather", "arguments": {"city": "Oslo"}},
            ]
        },
        {"text": "done"},
    ],
}


@pytest.fixture(autouse=True)
def _no_otel_environment(monkeypatch):
    """The OTLP exporters also read the process environment: keep the shell's out."""
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)


def in_flush(thread: threading.Thread, code: object, timeout_s: float = 30.0) -> None:
    """Return once `thread` runs `code` (a frame of it is on the thread's stack)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        frame = sys._current_frames().get(thread.ident or 0)
        while frame is not None:
            if frame.f_code is code:
                return
            frame = frame.f_back
        time.sleep(0.005)
    raise AssertionError("the main thread never entered the flush")


class Blackhole:
    """A TCP socket that accepts connections and never answers."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"http://127.0.0.1:{self.socket.getsockname()[1]}"

        self.connections: list[socket.socket] = []

    def accept_pending(self) -> int:
        """Accept the connections waiting in the backlog; return how many there are in all."""
        self.socket.settimeout(0.05)
        try:
            while True:
                self.connections.append(self.socket.accept()[0])
        except TimeoutError:
            return len(self.connections)

    def close(self) -> None:
        self.accept_pending()
        for connection in self.connections:
            connection.close()  # unblocks the abandoned export worker early
        self.socket.close()


def closed_port_endpoint() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def env_for(protocol: str, endpoint: str, **extra: str) -> dict[str, str]:
    return {
        "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        "OTEL_EXPORTER_OTLP_TIMEOUT": str(EXPORT_TIMEOUT_S),
        **extra,
    }


@pytest.fixture(params=["http/protobuf", "grpc"])
def protocol(request) -> str:
    return request.param


@pytest.fixture
def receiver(protocol) -> Iterator[HttpReceiver | GrpcReceiver]:
    receiver = HttpReceiver() if protocol == "http/protobuf" else GrpcReceiver()
    yield receiver
    receiver.close()


class TestOtlpExport:
    async def test_a_receiver_gets_the_turn(self, run_scenario, protocol, receiver):
        """A loopback OTLP receiver decodes the whole turn: names, parents, overlap, no secret."""
        health = TelemetryHealth()
        provider = build_tracer_provider(
            redactor=Redactor(), health=health, env=env_for(protocol, receiver.endpoint)
        )
        observer = SpanObserver(provider)
        outcome, _ = await run_scenario(SCENARIO, observer=observer)
        assert observer.shutdown(5.0)
        assert shutdown_tracing(provider, timeout_s=5)
        spans = decode(receiver.requests)
        assert [
            "chat scripted-model",
            "chat scripted-model",
            "execute_tool get_weather",
            "execute_tool get_weather",
            "invoke_agent weather-bot",
        ] == sorted(s["name"] for s in spans)
        (root,) = [s for s in spans if s["parent"] is None]
        assert {root["span_id"]} == {s["parent"] for s in spans if s is not root}
        assert {root["trace_id"]} == {s["trace_id"] for s in spans}
        assert {outcome.turn_id} == {s["attributes"]["zeroclaw.turn.id"] for s in spans}
        one, two = (s for s in spans if s["name"].startswith("execute_tool"))
        assert one["start"] < two["end"] and two["start"] < one["end"]
        assert not any(SECRET.encode() in raw for raw in receiver.requests)
        assert {} == dict(health.snapshot().export_failures)


class TestCollectorDown:
    async def test_a_closed_port_costs_the_turn_nothing(self, run_scenario, protocol):
        """With nothing listening the turn completes, and its spans are counted as lost."""
        health = TelemetryHealth()
        env = env_for(protocol, closed_port_endpoint(), OTEL_EXPORTER_OTLP_TIMEOUT="0.5")
        provider = build_tracer_provider(redactor=Redactor(), health=health, env=env)
        observer = SpanObserver(provider)
        outcome, _ = await run_scenario(SCENARIO, observer=observer)
        assert "final" == outcome.kind.value
        assert observer.shutdown(5.0)
        shutdown_tracing(provider, timeout_s=5)
        snapshot = health.snapshot()
        assert ({"traces": 1}, {"traces": 5}) == (
            dict(snapshot.export_failures),
            dict(snapshot.dropped),
        )

    async def test_a_refusing_collector_is_counted(self, run_scenario):
        """A collector that answers 400 Bad Request: the turn completes, the batch is counted."""
        refusing = HttpReceiver(status=400)
        try:
            health = TelemetryHealth()
            env = env_for("http/protobuf", refusing.endpoint)
            provider = build_tracer_provider(redactor=Redactor(), health=health, env=env)
            observer = SpanObserver(provider)
            outcome, _ = await run_scenario(SCENARIO, observer=observer)
            assert "final" == outcome.kind.value
            assert observer.shutdown(5.0)
            shutdown_tracing(provider, timeout_s=5)
            assert {"traces": 1} == dict(health.snapshot().export_failures)
        finally:
            refusing.close()

    async def test_a_silent_collector_does_not_delay_the_turn(self, run_scenario, protocol):
        """A collector that accepts and never answers: the turn ends well before the export
        timeout would have, and shutdown returns at its own deadline."""
        blackhole = Blackhole()
        try:
            env = env_for(protocol, blackhole.endpoint, OTEL_BSP_SCHEDULE_DELAY="1")
            provider = build_tracer_provider(redactor=Redactor(), health=TelemetryHealth(), env=env)
            observer = SpanObserver(provider)
            started = time.perf_counter()
            outcome, _ = await run_scenario(SCENARIO, observer=observer)
            elapsed = time.perf_counter() - started
            assert "final" == outcome.kind.value
            assert blackhole.accept_pending() >= 1  # an export was in flight during the turn
            assert elapsed < EXPORT_TIMEOUT_S / 2
            assert observer.shutdown(5.0)
            started = time.perf_counter()
            assert not shutdown_tracing(provider, timeout_s=0.3)
            assert time.perf_counter() - started < 1.5
        finally:
            blackhole.close()


class TestSilentCollectorLoss:
    async def test_spans_held_by_a_silent_collector_are_counted_and_reported(
        self, run_scenario, protocol
    ):
        """A collector that accepts and never answers: the exit flush returns at its deadline,
        every span it held is in `zeroclaw_telemetry_dropped_total{signal="traces"}`, and the
        exit line says `telemetry: 5 spans dropped (exporter timed out)`."""
        blackhole = Blackhole()
        try:
            telemetry = setup_telemetry(
                TelemetryOptions(trace_tree=False, env=env_for(protocol, blackhole.endpoint)),
                redactor=Redactor(),
            )
            outcome, _ = await run_scenario(SCENARIO, observer=telemetry.observer)
            assert "final" == outcome.kind.value
            assert not telemetry.shutdown(timeout_s=0.5)
            exposition = telemetry.metrics_text().decode()
            assert 'zeroclaw_telemetry_dropped_total{signal="traces"} 5.0' in exposition
            assert telemetry.loss_summary().startswith(
                "telemetry: 5 spans dropped (exporter timed out)"
            )
        finally:
            blackhole.close()

    def test_an_interrupt_ends_the_flush_and_gives_every_span_up(self):
        """Ctrl-C while the exit flush waits on a silent collector: the interrupt propagates,
        the spans held are counted as timed out at once, and the SDK's own shutdown (what
        runs at interpreter exit) no longer waits for the collector."""
        blackhole = Blackhole()
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            telemetry = setup_telemetry(
                TelemetryOptions(
                    trace_tree=False, env=env_for("http/protobuf", blackhole.endpoint)
                ),
                redactor=Redactor(),
            )
            outcome = asyncio.run(make_replay(SCENARIO, observer=telemetry.observer).run())
            assert "final" == outcome.kind.value

            def interrupt_once_exporting() -> None:
                blackhole.socket.settimeout(30)
                blackhole.connections.append(blackhole.socket.accept()[0])
                # The exporter may have connected before the flush began (a loaded machine):
                # the interrupt is meant for the flush, so wait until the main thread is in it.
                in_flush(threading.main_thread(), telemetry.shutdown.__func__.__code__)
                os.kill(os.getpid(), signal.SIGINT)

            threading.Thread(target=interrupt_once_exporting, daemon=True).start()
            with pytest.raises(KeyboardInterrupt):
                telemetry.shutdown(timeout_s=30.0)
            assert {"traces": 5} == dict(telemetry.health.snapshot().timed_out)
            telemetry.tracer_provider.shutdown()
        finally:
            signal.signal(signal.SIGINT, previous)
            blackhole.close()
