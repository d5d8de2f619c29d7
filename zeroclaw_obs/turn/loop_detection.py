"""Loop detection over the successful calls of one turn (window 20).

Three patterns, each with warn / block / abort thresholds (LIFECYCLE §7):
- `repeat`: identical calls (name + canonical arguments) in a row: 3 / 4 / 5.
- `ping_pong`: two tools alternating, counted in full A-B cycles: 4 / 5 / 6.
- `no_progress`: the same tool returning the same result for different arguments: 5 / 6 / 7.

Warnings and blocks reach the model as a note on the call's result and do not stop the call;
an abort ends the turn with `Agent loop aborted by loop detector: …`. Each check looks at the
bounded window only, so the cost per call is constant however long the turn is.
"""

from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import dataclass

from ..observability.events import LoopKind, LoopSeverity

__all__ = ["LoopDetector", "LoopKind", "LoopSeverity", "LoopSignal"]

WINDOW = 20


_RANK = {LoopSeverity.WARNING: 0, LoopSeverity.BLOCK: 1, LoopSeverity.ABORT: 2}

_THRESHOLDS: dict[LoopKind, tuple[int, int, int]] = {
    LoopKind.REPEAT: (3, 4, 5),
    LoopKind.PING_PONG: (4, 5, 6),
    LoopKind.NO_PROGRESS: (5, 6, 7),
}


@dataclass(frozen=True, slots=True)
class LoopSignal:
    """A detection: its kind, severity, count and the note the model reads."""

    kind: LoopKind
    severity: LoopSeverity
    count: int
    detail: str

    @property
    def note(self) -> str:
        """`[Loop Detection] …` or `[Loop Detection — BLOCKED] …` for the model."""
        if self.severity is LoopSeverity.WARNING:
            return f"[Loop Detection] {self.detail} Try a different approach."
        return (
            f"[Loop Detection — BLOCKED] {self.detail} Stop repeating this call and change "
            "your approach, or the turn will be aborted."
        )

    @property
    def abort_message(self) -> str:
        """`Agent loop aborted by loop detector: …`."""
        return f"Agent loop aborted by loop detector: {self.detail}"


@dataclass(frozen=True, slots=True)
class _Entry:
    tool: str
    key: str
    result: bytes


def _severity(kind: LoopKind, count: int) -> LoopSeverity | None:
    warn, block, abort = _THRESHOLDS[kind]
    if count >= abort:
        return LoopSeverity.ABORT
    if count >= block:
        return LoopSeverity.BLOCK
    if count >= warn:
        return LoopSeverity.WARNING
    return None


class LoopDetector:
    """Records successful calls and reports the strongest pattern they form."""

    def __init__(self, ignore: list[str] | None = None) -> None:
        self._window: deque[_Entry] = deque(maxlen=WINDOW)
        self._ignore = {name.strip().lower() for name in ignore or []}

    def record(self, tool: str, key: str, result: str) -> LoopSignal | None:
        """Record one successful call; return a signal when a pattern reaches a threshold.

        Args:
            tool: the tool name.
            key: canonical call key (name + canonical arguments).
            result: the normalised result text.
        """
        if tool.strip().lower() in self._ignore:
            return None
        digest = hashlib.blake2b(result.encode("utf-8", "replace"), digest_size=16).digest()
        self._window.append(_Entry(tool, key, digest))
        strongest: LoopSignal | None = None
        for signal in (self._repeat(), self._ping_pong(), self._no_progress()):
            if signal is not None and (
                strongest is None or _RANK[signal.severity] > _RANK[strongest.severity]
            ):
                strongest = signal
        return strongest

    def _repeat(self) -> LoopSignal | None:
        last = self._window[-1]
        count = 0
        for entry in reversed(self._window):
            if entry.key != last.key:
                break
            count += 1
        severity = _severity(LoopKind.REPEAT, count)
        if severity is None:
            return None
        detail = f"'{last.tool}' was called {count} times in a row with identical arguments."
        return LoopSignal(LoopKind.REPEAT, severity, count, detail)

    def _ping_pong(self) -> LoopSignal | None:
        entries = self._window
        if len(entries) < 4:
            return None
        a, b = entries[-1].tool, entries[-2].tool
        if a == b:
            return None
        run = 0
        for i, entry in enumerate(reversed(entries)):
            if entry.tool != (a if i % 2 == 0 else b):
                break
            run += 1
        cycles = run // 2
        severity = _severity(LoopKind.PING_PONG, cycles)
        if severity is None:
            return None
        detail = f"'{b}' and '{a}' have alternated for {cycles} cycles."
        return LoopSignal(LoopKind.PING_PONG, severity, cycles, detail)

    def _no_progress(self) -> LoopSignal | None:
        last = self._window[-1]
        keys: set[str] = set()
        count = 0
        for entry in reversed(self._window):
            if entry.tool != last.tool or entry.result != last.result:
                break
            keys.add(entry.key)
            count += 1
        if len(keys) < 2:
            return None
        severity = _severity(LoopKind.NO_PROGRESS, count)
        if severity is None:
            return None
        detail = f"'{last.tool}' returned the same result {count} times for different arguments."
        return LoopSignal(LoopKind.NO_PROGRESS, severity, count, detail)
