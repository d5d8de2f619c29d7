"""Telemetry health: how much telemetry was lost, counted per signal, never raised.

Every exporter path counts what it could not deliver here instead of raising into a turn: spans
or records dropped because a bounded queue was full or the pipeline was shut down, failed
export calls (collector down, refusing, timing out), and observer bugs that were swallowed.
The metrics module exposes these counters (`zeroclaw_telemetry_dropped_total{signal}`).

This module imports no telemetry library, so any signal's code can count into it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

__all__ = ["HealthCounter", "HealthSnapshot", "Signal", "TelemetryHealth"]


class Signal(StrEnum):
    """The telemetry signal a count belongs to (the `signal` label)."""

    TRACES = "traces"
    METRICS = "metrics"
    LOGS = "logs"


class HealthCounter(StrEnum):
    """What went wrong."""

    DROPPED = "dropped"
    """Items that will never reach a backend: queue full, after shutdown, or in a failed batch."""
    EXPORT_FAILURES = "export_failures"
    """Export calls that failed or raised (one per batch, not per item)."""
    OBSERVER_ERRORS = "observer_errors"
    """Events an observer could not record because of a bug; the turn never saw the error."""
    TIMED_OUT = "timed_out"
    """Of the dropped items, those still queued or in an unfinished export when the shutdown
    deadline passed (a collector that accepts and never answers); the exit line names it."""


@dataclass(frozen=True, slots=True)
class HealthSnapshot:
    """A consistent copy of every counter, keyed by signal value (`"traces"`, …)."""

    dropped: Mapping[str, int]
    export_failures: Mapping[str, int]
    observer_errors: Mapping[str, int]
    timed_out: Mapping[str, int]


class TelemetryHealth:
    """Thread-safe counters, one per (`HealthCounter`, `Signal`).

    Incremented from the turn's thread (observer errors, queue-full drops) and from export
    worker threads (failed batches), read by the metrics exposition.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[HealthCounter, dict[str, int]] = {c: {} for c in HealthCounter}

    def increment(self, counter: HealthCounter, signal: Signal, n: int = 1) -> None:
        """Add `n` to one counter. Never blocks for long and never raises."""
        if n <= 0:
            return
        with self._lock:
            by_signal = self._counts[counter]
            by_signal[signal.value] = by_signal.get(signal.value, 0) + n

    def snapshot(self) -> HealthSnapshot:
        """Every counter as it stands now."""
        with self._lock:
            copies = {c: MappingProxyType(dict(v)) for c, v in self._counts.items()}
        return HealthSnapshot(
            dropped=copies[HealthCounter.DROPPED],
            export_failures=copies[HealthCounter.EXPORT_FAILURES],
            observer_errors=copies[HealthCounter.OBSERVER_ERRORS],
            timed_out=copies[HealthCounter.TIMED_OUT],
        )
