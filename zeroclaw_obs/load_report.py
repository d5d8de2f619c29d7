"""The counts of a load run and the one line that shows them (`load`, `load --target`).

`Tally` counts turns and tool outcomes as they end (an `Observer` for the in-process run; the
HTTP driver counts the events it reads); `LoadReport` is a snapshot; `progress_line` is the
refreshing status line and the summary; `LoadProgress` writes it in place on a terminal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TextIO

from .observability.events import ObserverEvent, ToolCall, ToolOutcome, TurnOutcomeKind

__all__ = ["LoadProgress", "LoadReport", "StopReason", "Tally", "progress_line"]


class StopReason(StrEnum):
    """Why a load run stopped starting turns."""

    DURATION = "duration"
    """`duration` elapsed; turns in flight finished within the grace period."""
    TERMINATED = "terminated"
    """Asked to stop gracefully (SIGTERM); turns in flight finished within the grace period."""
    INTERRUPTED = "interrupted"
    """Interrupted (SIGINT); turns in flight were cancelled at once."""


@dataclass(kw_only=True)
class LoadReport:
    """The counts of a load run (or of the run so far, for the progress line)."""

    elapsed_s: float
    started: int
    """Turns started."""
    turns: dict[TurnOutcomeKind, int]
    """Turns ended, by outcome."""
    tools: dict[ToolOutcome, int]
    """Result slots closed, by outcome."""
    in_flight: int
    max_in_flight: int
    """The most turns that were in flight at once; never above `concurrency`."""
    delayed: int
    """Starts that waited for a free slot because `concurrency` turns were in flight."""
    failures: dict[str, int] = field(default_factory=dict)
    """Turns that raised instead of ending (e.g. a script with too few responses), by file."""
    stop_reason: StopReason | None = None

    @property
    def rate(self) -> float:
        """Turns started per second so far."""
        return self.started / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def failed(self) -> int:
        """Turns that raised, over every file."""
        return sum(self.failures.values())


class Tally:
    """The running counts of a load run; an `Observer` for the tool outcomes. Never raises."""

    def __init__(self) -> None:
        self.started = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.delayed = 0
        self.turns = dict.fromkeys(TurnOutcomeKind, 0)
        self.tools = dict.fromkeys(ToolOutcome, 0)
        self.failures: dict[str, int] = {}

    def on_event(self, event: ObserverEvent) -> None:
        """Count the outcome of every closed result slot."""
        if isinstance(event, ToolCall):
            self.tools[event.outcome] += 1

    def turn_started(self) -> None:
        """One more turn in flight."""
        self.started += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def turn_ended(self, outcome: TurnOutcomeKind | None, source: str) -> None:
        """A turn left flight with `outcome`, or raised (None) in the scenario `source`."""
        self.in_flight -= 1
        if outcome is None:
            self.failures[source] = self.failures.get(source, 0) + 1
        else:
            self.turns[outcome] += 1

    def report(self, elapsed_s: float, stop_reason: StopReason | None = None) -> LoadReport:
        """A snapshot of the counts."""
        return LoadReport(
            elapsed_s=elapsed_s,
            started=self.started,
            turns=dict(self.turns),
            tools=dict(self.tools),
            in_flight=self.in_flight,
            max_in_flight=self.max_in_flight,
            delayed=self.delayed,
            failures=dict(self.failures),
            stop_reason=stop_reason,
        )


_TURN_LABELS = (
    (TurnOutcomeKind.FINAL, "final"),
    (TurnOutcomeKind.MAX_ITERATIONS, "max_iter"),
    (TurnOutcomeKind.ABORTED, "aborted"),
    (TurnOutcomeKind.CANCELLED, "cancelled"),
    (TurnOutcomeKind.ERROR, "error"),
)


_TOOL_LABELS = (
    (ToolOutcome.SUCCESS, "ok"),
    (ToolOutcome.ERROR, "err"),
    (ToolOutcome.DENIED, "denied"),
    (ToolOutcome.REPLACED, "replaced"),
    (ToolOutcome.DEDUPLICATED, "dedup"),
    (ToolOutcome.INTERRUPTED, "interrupted"),
)


_RARE_TOOL_LABELS = (
    (ToolOutcome.UNKNOWN, "unknown"),
    (ToolOutcome.EXCLUDED, "excluded"),
    (ToolOutcome.CANCELLED_BY_HOOK, "hook_cancelled"),
)


def progress_line(report: LoadReport) -> str:
    """The one-line summary of a load run: counts and outcome names only, never a payload.

    `load 12.3s  turns 24 (1.97/s)  in-flight 3  final 20 max_iter 0 aborted 1 cancelled 2
    error 1  tools ok 80 err 6 denied 4 replaced 1 dedup 3 interrupted 2`, then `unknown`,
    `excluded`, `hook_cancelled`, `delayed` and `failed` counts when they are not zero.
    """
    turns = " ".join(f"{label} {report.turns[kind]}" for kind, label in _TURN_LABELS)
    tools = " ".join(f"{label} {report.tools[kind]}" for kind, label in _TOOL_LABELS)
    rare = [
        f"{label} {report.tools[kind]}" for kind, label in _RARE_TOOL_LABELS if report.tools[kind]
    ]
    line = (
        f"load {report.elapsed_s:.1f}s  turns {report.started} ({report.rate:.2f}/s)  "
        f"in-flight {report.in_flight}  {turns}  tools {' '.join([tools, *rare])}"
    )
    if report.delayed:
        line += f"  delayed {report.delayed}"
    if report.failed:
        line += f"  failed {report.failed}"
    return line


class LoadProgress:
    """Writes the progress line: refreshed in place on a TTY, as plain periodic lines otherwise.

    Args:
        stream: where the line goes (stderr for the CLI).
        interval_s: seconds between refreshes; None picks 0.5 on a TTY and 5 otherwise, so a
            log collector gets a line every few seconds rather than a stream of them.
    """

    def __init__(self, stream: TextIO, *, interval_s: float | None = None) -> None:
        self._stream = stream
        try:
            self._tty = bool(stream.isatty())
        except (OSError, ValueError, AttributeError):
            self._tty = False
        self.interval_s = interval_s if interval_s is not None else (0.5 if self._tty else 5.0)

    def update(self, line: str) -> None:
        """Show `line` as the current state."""
        # \x1b[K clears what a longer previous line left behind.
        self._write(f"\r{line}\x1b[K" if self._tty else line + "\n")

    def finish(self, line: str) -> None:
        """Show `line` as the final state and end the refreshing line."""
        self._write(f"\r{line}\x1b[K\n" if self._tty else line + "\n")

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):
            pass  # a closed stderr must never stop the load
