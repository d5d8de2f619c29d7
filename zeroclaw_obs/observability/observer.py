"""The `Observer` interface the engine reports to, a no-op, and an isolating fan-out.

`turn/` sees only this module and `events.py`; exporters (OpenTelemetry, Prometheus, structlog,
progress lines) implement `Observer` elsewhere, so a turn runs with no telemetry installed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from .events import ObserverEvent

__all__ = ["MultiObserver", "NoopObserver", "Observer"]

_log = logging.getLogger(__name__)


@runtime_checkable
class Observer(Protocol):
    """Receives every event of every turn, on the turn's path.

    `on_event` must not block or raise: hand slow work to a queue. `MultiObserver` isolates
    children that break this rule, but a slow observer still slows the turn.
    """

    def on_event(self, event: ObserverEvent) -> None:
        """Record `event`. Must not block or raise."""
        ...


class NoopObserver:
    """Records nothing; the default when no telemetry is configured."""

    def on_event(self, event: ObserverEvent) -> None:
        return None


class MultiObserver:
    """Fans each event out to children, isolating each from the others' failures.

    A child that raises is logged once per exception type and counted in `failures`;
    the exception never reaches the turn.
    """

    def __init__(self, observers: Iterable[Observer] = ()) -> None:
        self._observers: tuple[Observer, ...] = tuple(observers)
        self.failures = 0
        self._reported: set[tuple[int, type]] = set()

    def add(self, observer: Observer) -> None:
        """Append an observer; events it missed are not replayed."""
        # A tuple swapped in whole keeps iteration in `on_event` safe without a lock.
        self._observers = (*self._observers, observer)

    def on_event(self, event: ObserverEvent) -> None:
        for observer in self._observers:
            try:
                observer.on_event(event)
            except Exception as exc:
                self.failures += 1
                key = (id(observer), type(exc))
                if key not in self._reported:
                    self._reported.add(key)
                    _log.warning(
                        "observer %s failed: %s", type(observer).__name__, type(exc).__name__
                    )
