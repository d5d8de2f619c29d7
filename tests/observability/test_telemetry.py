"""Tests for `zeroclaw_obs.observability.telemetry`: what `setup_telemetry` installs and flushes."""

from __future__ import annotations

import io
import json
import logging

from zeroclaw_obs.observability.events import AgentStart, Correlation, ToolCall, ToolOutcome
from zeroclaw_obs.observability.telemetry import TelemetryOptions, setup_telemetry
from zeroclaw_obs.observability.trace_tree import TraceTreeObserver
from zeroclaw_obs.observability.traces.otlp_json import read_otlp_json
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.tools.base import tool

from ..builders import SECRET, WEATHER, Seen, call, llm_response, mixed_turn
from ..conftest import make_replay

NO_EXPORT = {"OTEL_TRACES_EXPORTER": "none"}
"""Spans keep their ids but go nowhere: no collector is dialled."""

LEAKY_TURN = {
    "user": "go",
    "config": {"approval": {"auto_approve": ["get_weather"]}, "receipts": {"enabled": True}},
    "tools": [WEATHER],
    "responses": [
        {"tool_calls": [call("get_weather", "c1", city="Leaky")]},
        {"tool_calls": [call("get_weather", "c2", city="Leaky")]},
        {"text": "done"},
    ],
}


class TestSetupTelemetry:
    async def test_every_log_line_is_in_the_file_after_shutdown(self, tmp_path):
        """Info lines are not flushed one by one, yet after `shutdown` every line of every turn
        is on disk, with the stream still open."""
        path = tmp_path / "logs.jsonl"
        with path.open("w", encoding="utf-8") as stream:
            telemetry = setup_telemetry(
                TelemetryOptions(logs=stream, env=NO_EXPORT),
                redactor=Redactor(),
            )
            for _ in range(3):
                await make_replay(mixed_turn(), observer=telemetry.observer).run()
            telemetry.shutdown(timeout_s=5.0)
            records = [json.loads(line) for line in path.read_text().splitlines()]
        assert 3 == sum(1 for r in records if r["event"] == "turn_end")
        assert 3 * 4 == sum(1 for r in records if r["event"] == "tool_call_result")

    async def test_a_secret_reaches_neither_file(self, tmp_path):
        """With the guard and the log processor sharing one memory of clean strings, a secret
        in tool results, on a user's span or in a library's log line reaches neither file."""
        spans, logs = tmp_path / "spans.jsonl", tmp_path / "logs.jsonl"
        with logs.open("w", encoding="utf-8") as stream:
            telemetry = setup_telemetry(
                TelemetryOptions(otlp_json=spans, logs=stream, env={}), redactor=Redactor()
            )
            for _ in range(2):
                await make_replay(LEAKY_TURN, observer=telemetry.observer).run()
            assert telemetry.tracer_provider is not None
            user = telemetry.tracer_provider.get_tracer("user-code")
            user.start_span("user", attributes={"token": SECRET, "channel": "cli"}).end()
            logging.getLogger("tests.zeroclaw.library").warning("token=%s", SECRET)
            telemetry.shutdown(timeout_s=5.0)
        exported = spans.read_text() + logs.read_text()
        read = read_otlp_json(spans)
        (user_span,) = [s for s in read if s["name"] == "user"]
        assert "[REDACTED:github_token]" == user_span["attributes"]["token"]
        assert 3 == len({s["trace_id"] for s in read})
        assert SECRET not in exported

    async def test_a_burst_of_calls_builds_no_span_beside_the_turn(self, tmp_path):
        """A turn of a few thousand quick calls (past the span queue's old mark) builds no
        span while it runs, since a worker beside a busy turn costs the process far more CPU
        than after it (issue 17); once the turn ends, a processor the user installed and the
        exporter see every span, and the log file has every line."""
        calls = 2500
        spans, logs = tmp_path / "spans.jsonl", io.StringIO()
        user = Seen()
        seen: list[int] = []

        @tool
        async def note(n: int) -> str:
            """Note how many spans have ended so far."""
            if n == calls - 1:
                seen.append(len(user.ended))
            return "ok"

        telemetry = setup_telemetry(
            TelemetryOptions(otlp_json=spans, logs=logs, env={}), redactor=Redactor()
        )
        assert telemetry.tracer_provider is not None
        telemetry.tracer_provider.add_span_processor(user)
        batch = [{"id": f"c{n}", "name": "note", "arguments": {"n": n}} for n in range(calls)]
        data = {
            "user": "go",
            "config": {"approval": {"auto_approve": ["note"]}},
            "responses": [{"tool_calls": batch}, {"text": "done"}],
        }
        await make_replay(data, observer=telemetry.observer, extra_tools=[note]).run()
        assert telemetry.shutdown(timeout_s=30.0)
        assert [0] == seen
        assert calls == user.ended.count("execute_tool note")
        assert calls == sum(1 for s in read_otlp_json(spans) if s["name"] == "execute_tool note")
        records = [json.loads(line) for line in logs.getvalue().splitlines()]
        assert calls == sum(1 for r in records if r["event"] == "tool_call_result")

    def test_the_trace_tree_is_on_by_default(self):
        """The terminal tree is kept unless asked otherwise (the command line keeps it on)."""
        telemetry = setup_telemetry(TelemetryOptions(env=NO_EXPORT), redactor=Redactor())
        try:
            assert isinstance(telemetry.tree, TraceTreeObserver)
        finally:
            telemetry.shutdown()

    def test_the_trace_tree_can_be_left_out(self):
        """`trace_tree=False` installs no tree observer: nothing is kept per event."""
        telemetry = setup_telemetry(
            TelemetryOptions(trace_tree=False, env=NO_EXPORT), redactor=Redactor()
        )
        try:
            assert None is telemetry.tree
        finally:
            telemetry.shutdown()

    def test_metric_labels_pass_the_runtime_s_redactor(self):
        """A token in a model name sent straight to the observer never reaches the exposition."""
        telemetry = setup_telemetry(TelemetryOptions(env=NO_EXPORT), redactor=Redactor())
        try:
            telemetry.observer.on_event(llm_response(model=f"m/{SECRET}"))
            exposition = telemetry.metrics_text().decode()
        finally:
            telemetry.shutdown()
        assert SECRET not in exposition
        assert 'model="m/[REDACTED:github_token]"' in exposition

    def test_shutdown_survives_a_closed_log_stream(self, tmp_path):
        """A log stream the caller already closed is not an error at shutdown."""
        stream = (tmp_path / "logs.jsonl").open("w", encoding="utf-8")
        telemetry = setup_telemetry(
            TelemetryOptions(logs=stream, env=NO_EXPORT), redactor=Redactor()
        )
        stream.close()
        assert telemetry.shutdown(timeout_s=5.0)


class TestTraceTreeControls:
    def test_names_in_the_tree_show_controls_as_escapes(self):
        """An agent alias or a model-invented tool name cannot move the cursor or reorder text."""
        correlation = Correlation(turn_id="t", channel="cli", agent_alias="bot\x1b[1A")
        tree = TraceTreeObserver()
        tree.on_event(AgentStart(correlation=correlation, provider="p", model="m", time_ns=0))
        tree.on_event(
            ToolCall(
                correlation=correlation,
                iteration=1,
                tool_call_id="c1",
                tool="get\u202eweather\ud800",
                known_tool=False,
                provenance="native",
                outcome=ToolOutcome.UNKNOWN,
                success=False,
                arguments="{}",
                result="Unknown tool",
                start_time_ns=0,
                time_ns=0,
                duration_s=0.0,
            )
        )
        rendered = tree.render()
        assert "invoke_agent bot\\x1b[1A  (running)" == rendered.splitlines()[0]
        assert "execute_tool get\\u202eweather\\ud800  0.00s  unknown" in rendered
        assert "\x1b" not in rendered and "\u202e" not in rendered
