"""Progress lines on stderr: `⏳ tool: hint`, `✅ tool (1.2s)`, `❌ tool (0.3s): reason`, `↪ tool`.

A provider request sent again gets a line too, since the wait can be long:
`↻ openai: HTTP 429 rate_limit_error, retry 1 in 2.0s`.

An `Observer` like any exporter. The arguments and results in observer events are already
redacted by the engine; this observer only collapses whitespace and cuts: hints at 60
characters, reasons at 200, so one line stays one line whatever a tool printed. Tool names,
hints and reasons are chosen by a model or a tool, so every line is passed through
`_terminal.printable` last: an escape sequence or a bidi control is shown as `\\x1b[2J` or
`\\u202e`, never obeyed by the terminal.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, TextIO

from .._terminal import printable
from .events import ObserverEvent, ProviderAttempt, ToolCall, ToolCallStart, ToolOutcome

__all__ = ["ProgressObserver", "format_hint", "one_line"]

HINT_LIMIT = 60
REASON_LIMIT = 200
_WHITESPACE = re.compile(r"\s+")


def one_line(text: str, limit: int) -> str:
    """Collapse whitespace runs to one space and cut at `limit` characters (with `…`)."""
    text = _WHITESPACE.sub(" ", text).strip()
    if len(text) > limit:
        return text[: limit - 1] + "…"
    return text


def format_hint(redacted_arguments: str) -> str:
    """`key=value, …` from redacted argument JSON, one line, at most 60 characters."""
    try:
        value: Any = json.loads(redacted_arguments)
    except ValueError:
        value = redacted_arguments
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            if key == "approved":
                continue  # the runtime's marker, not something the model asked for
            shown = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
            parts.append(f"{key}={shown}")
        text = ", ".join(parts)
    else:
        text = str(value)
    return one_line(text, HINT_LIMIT)


class ProgressObserver:
    """Writes one line when a slot opens and one when it closes. Never raises."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream

    def on_event(self, event: ObserverEvent) -> None:
        if isinstance(event, ToolCallStart):
            hint = format_hint(event.arguments)
            self._write(f"⏳ {event.tool}: {hint}" if hint else f"⏳ {event.tool}")
        elif isinstance(event, ToolCall):
            seconds = f"{event.duration_s:.1f}s"
            if event.outcome is ToolOutcome.REPLACED:
                # Successful for the model, but nothing ran: never a ✅ with a duration.
                self._write(f"↪ {event.tool}: replaced by the operator (not run)")
            elif event.success:
                self._write(f"✅ {event.tool} ({seconds})")
            else:
                reason = one_line(event.result.removeprefix("Error: "), REASON_LIMIT)
                self._write(f"❌ {event.tool} ({seconds}): {reason}")
        elif isinstance(event, ProviderAttempt):
            status = f"HTTP {event.status} " if event.status is not None else ""
            reason = one_line(f"{status}{event.error_type}", REASON_LIMIT)
            self._write(
                f"↻ {event.provider}: {reason}, retry {event.attempt} in {event.wait_s:.1f}s"
            )

    def _write(self, line: str) -> None:
        stream = self._stream or sys.stderr
        try:
            stream.write(printable(line) + "\n")
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed stderr must never break a turn
