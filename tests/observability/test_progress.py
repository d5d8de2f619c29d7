"""Progress lines: exact shapes, redacted input, one line, cut at 60 / 200 characters."""

from __future__ import annotations

import dataclasses
import io

from zeroclaw_obs.observability.events import (
    Correlation,
    ProviderAttempt,
    ToolCall,
    ToolCallStart,
    ToolOutcome,
)
from zeroclaw_obs.observability.progress import ProgressObserver, format_hint, one_line

CORRELATION = Correlation(turn_id="t", channel="cli", agent_alias="a")


def start(arguments: str) -> ToolCallStart:
    return ToolCallStart(
        correlation=CORRELATION,
        iteration=1,
        tool_call_id="c1",
        tool="get_weather",
        provenance="native",
        arguments=arguments,
        time_ns=0,
    )


def end(success: bool, result: str, duration: float = 1.23) -> ToolCall:
    return ToolCall(
        correlation=CORRELATION,
        iteration=1,
        tool_call_id="c1",
        tool="get_weather",
        known_tool=True,
        provenance="native",
        outcome=ToolOutcome.SUCCESS if success else ToolOutcome.ERROR,
        success=success,
        arguments="{}",
        result=result,
        start_time_ns=0,
        time_ns=0,
        duration_s=duration,
    )


class TestProgressObserver:
    def lines(self, *events) -> list[str]:
        stream = io.StringIO()
        observer = ProgressObserver(stream)
        for event in events:
            observer.on_event(event)
        return stream.getvalue().splitlines()

    def test_start_success_and_failure_lines(self):
        """`⏳ tool: hint`, `✅ tool (1.2s)` and `❌ tool (0.3s): reason`."""
        expected = [
            "⏳ get_weather: city=Paris",
            "✅ get_weather (1.2s)",
            "❌ get_weather (0.3s): city not found",
        ]
        actual = self.lines(
            start('{"city": "Paris"}'),
            end(True, "18C"),
            end(False, "Error: city not found", 0.3),
        )
        assert expected == actual

    def test_a_replaced_call_says_so(self):
        """A call the operator replaced did not run: no ✅ and no duration."""
        replaced = dataclasses.replace(end(True, "skipped"), outcome=ToolOutcome.REPLACED)
        assert ["↪ get_weather: replaced by the operator (not run)"] == self.lines(replaced)

    def test_a_provider_retry_gets_a_line(self):
        """`↻ provider: HTTP 429 rate_limit_error, retry 1 in 2.0s`: the wait is visible."""
        attempt = ProviderAttempt(
            correlation=CORRELATION,
            iteration=1,
            provider="openai",
            model="gpt",
            attempt=1,
            error_type="rate_limit_error",
            status=429,
            wait_s=2.0,
            time_ns=0,
        )
        timeout = dataclasses.replace(attempt, error_type="timeout", status=None, wait_s=0.25)
        assert [
            "↻ openai: HTTP 429 rate_limit_error, retry 1 in 2.0s",
            "↻ openai: timeout, retry 1 in 0.2s",
        ] == self.lines(attempt, timeout)

    def test_reason_is_collapsed_and_cut_at_200(self):
        """A multi-line reason becomes one line of at most 200 characters."""
        (line,) = self.lines(end(False, "Error: line one\n\n\tline two " + "x" * 400))
        reason = line.split(": ", 1)[1]
        assert reason.startswith("line one line two x")
        assert 200 == len(reason)
        assert reason.endswith("…")

    def test_approved_marker_is_not_a_hint(self):
        """The runtime's `approved` marker is not shown as something the model asked for."""
        assert "command=ls" == format_hint('{"command": "ls", "approved": true}')

    def test_closed_stream_never_raises(self):
        """A closed stderr does not break the turn."""
        stream = io.StringIO()
        stream.close()
        ProgressObserver(stream).on_event(start("{}"))


class TestFormatHint:
    def test_cut_at_60(self):
        """Hints are cut at 60 characters, whitespace collapsed."""
        hint = format_hint('{"query": "' + "a  b\\n" * 40 + '"}')
        assert 60 == len(hint)
        assert "\n" not in hint
        assert "  " not in hint

    def test_one_line_keeps_short_text(self):
        """Short text is only whitespace-collapsed."""
        assert "a b c" == one_line(" a\n b\tc ", 60)


class TestTerminalControls:
    def test_controls_in_a_name_hint_or_reason_are_escaped(self):
        """A model-chosen tool name, argument or result cannot clear the screen or reorder text."""
        stream = io.StringIO()
        observer = ProgressObserver(stream)
        evil = "get\x1b[2J\u202e"
        observer.on_event(
            ToolCallStart(
                correlation=CORRELATION,
                iteration=1,
                tool_call_id="c1",
                tool=evil,
                provenance="native",
                arguments='{"city": "Os\\u001b]0;pwned\\u0007lo"}',
                time_ns=0,
            )
        )
        observer.on_event(end(False, "Error: bad \x9b31m \ud800"))
        assert [
            "⏳ get\\x1b[2J\\u202e: city=Os\\x1b]0;pwned\\x07lo",
            "❌ get_weather (1.2s): bad \\x9b31m \\ud800",
        ] == stream.getvalue().splitlines()
