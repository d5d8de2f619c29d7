"""Loop detection over the successful calls of one turn (window 20).

Three patterns, each with warn / block / abort thresholds (LIFECYCLE §7):
- `repeat`: identical calls (name + canonical arguments) in a row: 3 / 4 / 5.
- `ping_pong`: two tools alternating, counted in full A-B cycles: 4 / 5 / 6.
- `no_progress`: the same tool returning the same result for different arguments: 5 / 6 / 7.

Warnings and blocks reach the model as a note on the call's result and do not stop the call;
an abort ends the turn with `Agent loop aborted by loop detector: …`. Each check looks at the
bounded window only, so the cost per call is constant however long the turn is.

Results are compared by their UTF-8 bytes (a lone surrogate reads as `?`). The detector keeps
only the newest result's bytes, and those of a result longer than `TEXT_LIMIT` only as a
BLAKE2b digest, so it never holds a large result (results with equal bytes have equal lengths,
so both are kept as bytes or both as digests).
"""

from __future__ import annotations

import hashlib
import itertools
from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

from ..observability.events import LoopKind, LoopSeverity

__all__ = ["LoopDetector", "LoopKind", "LoopSeverity", "LoopSignal"]

WINDOW = 20
TEXT_LIMIT = 65_536
"""Results up to this many characters are kept whole (as bytes) for the next comparison."""


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


_QUIET = (
    _THRESHOLDS[LoopKind.REPEAT][0],
    2 * _THRESHOLDS[LoopKind.PING_PONG][0] - 2,
    _THRESHOLDS[LoopKind.NO_PROGRESS][0],
)
"""The run counters (`_same_key`, `_period_two`, `_same_result`) below which no pattern
reaches its warning: a ping-pong run is the newest two calls plus `_period_two`."""


class _Entry(NamedTuple):
    tool: str
    key: str


def _fingerprint(result: str) -> bytes:
    """The result's bytes, or their digest for a result longer than `TEXT_LIMIT`."""
    data = result.encode("utf-8", "replace")
    if len(result) <= TEXT_LIMIT:
        return data
    return hashlib.blake2b(data, digest_size=16).digest()


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
    """Records successful calls and reports the strongest pattern they form.

    Each pattern is a run that ends at the newest call, so three counters follow the runs as
    calls arrive (O(1) a call); the window is read only for what a counter cannot say (the
    distinct arguments of a long no-progress run). A run counts at most the calls the window
    holds, exactly as a walk back over the window would.
    """

    def __init__(self, ignore: list[str] | None = None) -> None:
        self._window: deque[_Entry] = deque(maxlen=WINDOW)
        self._ignore = {name.strip().lower() for name in ignore or []}
        self._same_key = 0
        """Calls in a row (newest included) with the newest call's key."""
        self._period_two = 0
        """Calls in a row, from the newest back, whose tool equals the tool two calls before;
        0 while the newest two calls are of one tool (no ping-pong then, nor at the next call:
        a different tool there differs from the one two calls before it)."""
        self._same_result = 0
        """Calls in a row (newest included) with the newest call's tool and result."""
        self._last_result = b""
        """The newest call's result (`_fingerprint`)."""

    def record(self, tool: str, key: str, result: str) -> LoopSignal | None:
        """Record one successful call; return a signal when a pattern reaches a threshold.

        Args:
            tool: the tool name.
            key: canonical call key (name + canonical arguments).
            result: the normalised result text.
        """
        if self._ignore and tool.strip().lower() in self._ignore:
            return None
        fingerprint = _fingerprint(result)
        window = self._window
        if window:
            last = window[-1]
            self._same_key = self._same_key + 1 if key == last.key else 1
            same = tool == last.tool and fingerprint == self._last_result
            self._same_result = self._same_result + 1 if same else 1
            before = window[-2] if len(window) > 1 else None
            if before is not None and tool == before.tool and tool != last.tool:
                self._period_two += 1
            else:
                self._period_two = 0
        else:
            self._same_key = self._same_result = 1
            self._period_two = 0
        window.append(_Entry(tool, key))
        self._last_result = fingerprint
        repeat, period_two, no_progress = _QUIET
        if (
            self._same_key < repeat
            and self._period_two < period_two
            and self._same_result < no_progress
        ):
            return None
        strongest: LoopSignal | None = None
        for signal in (self._repeat(), self._ping_pong(), self._no_progress()):
            if signal is not None and (
                strongest is None or _RANK[signal.severity] > _RANK[strongest.severity]
            ):
                strongest = signal
        return strongest

    def _repeat(self) -> LoopSignal | None:
        count = min(self._same_key, len(self._window))
        severity = _severity(LoopKind.REPEAT, count)
        if severity is None:
            return None
        detail = (
            f"'{self._window[-1].tool}' was called {count} times in a row with identical arguments."
        )
        return LoopSignal(LoopKind.REPEAT, severity, count, detail)

    def _ping_pong(self) -> LoopSignal | None:
        entries = self._window
        if len(entries) < 4:
            return None
        a, b = entries[-1].tool, entries[-2].tool
        if a == b:
            return None
        # The newest two calls open the run; each earlier one joins while its tool equals the
        # tool two calls later.
        cycles = min(2 + self._period_two, len(entries)) // 2
        severity = _severity(LoopKind.PING_PONG, cycles)
        if severity is None:
            return None
        detail = f"'{b}' and '{a}' have alternated for {cycles} cycles."
        return LoopSignal(LoopKind.PING_PONG, severity, cycles, detail)

    def _no_progress(self) -> LoopSignal | None:
        count = min(self._same_result, len(self._window))
        severity = _severity(LoopKind.NO_PROGRESS, count)
        if severity is None:
            return None
        keys = {entry.key for entry in itertools.islice(reversed(self._window), count)}
        if len(keys) < 2:
            return None
        last = self._window[-1]
        detail = f"'{last.tool}' returned the same result {count} times for different arguments."
        return LoopSignal(LoopKind.NO_PROGRESS, severity, count, detail)
