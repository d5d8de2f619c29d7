"""The `Observer` interface the engine reports to, a no-op, and an isolating fan-out.

`turn/` sees only this module and `events.py`; exporters (OpenTelemetry, Prometheus, structlog,
progress lines) implement `Observer` elsewhere, so a turn runs with no telemetry installed.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from .events import ObserverEvent

__all__ = ["MultiObserver", "NoopObserver", "Observer", "ToolScopes", "tool_scope"]

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


@runtime_checkable
class ToolScopes(Protocol):
    """An observer that has a context to run a tool in (the tracing side: its tool span).

    The engine enters the scope around `Tool.execute`, in the task that runs the call, so
    spans that the tool's own code (or a library it calls, e.g. httpx) starts nest under the
    call's `execute_tool` span.
    """

    def tool_scope(self, turn_id: str, tool_call_id: str) -> AbstractContextManager[None] | None:
        """The scope of the open call `tool_call_id`, or None. Must not block or raise."""
        ...


_NO_SCOPE: AbstractContextManager[None] = contextlib.nullcontext()
"""The empty scope (stateless, so one serves every call)."""


def tool_scope(observer: Observer, turn_id: str, tool_call_id: str) -> AbstractContextManager[None]:
    """The scope `observer` gives the call, or an empty one; never raises.

    `getattr`, not `isinstance(observer, ToolScopes)`: a runtime protocol check costs ~10 µs,
    more than the engine's whole per-call budget allows for an observer that has no scopes.
    """
    scopes = getattr(observer, "tool_scope", None)
    if scopes is None:
        return _NO_SCOPE
    try:
        scope = scopes(turn_id, tool_call_id)
    except Exception:
        return _NO_SCOPE
    return _NO_SCOPE if scope is None else scope


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

    @property
    def wants_messages(self) -> bool:
        """Whether a child asks for message content on `LlmRequest` / `LlmResponse` (opt-in:
        the engine then builds redacted message JSON for every provider call)."""
        return any(getattr(observer, "wants_messages", False) for observer in self._observers)

    def tool_scope(self, turn_id: str, tool_call_id: str) -> AbstractContextManager[None] | None:
        """The first child scope (see `ToolScopes`); there is one tracing side per runtime."""
        for observer in self._observers:
            scope = tool_scope(observer, turn_id, tool_call_id)
            if scope is not _NO_SCOPE:
                return scope
        return None

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
