"""Shared fixtures: build real runtimes from inline scenarios; nothing global to restore."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from zeroclaw_obs.observability.events import ObserverEvent
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.replay import Replay, build_replay
from zeroclaw_obs.scenario import parse_scenario
from zeroclaw_obs.turn.loop import TurnOutcome

from .providers.wire import WireServer

if TYPE_CHECKING:
    from .builders import Traced


class RecordingObserver:
    """Keeps every observer event, in order."""

    def __init__(self) -> None:
        self.events: list[ObserverEvent] = []

    def on_event(self, event: ObserverEvent) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list[Any]:
        """The events of one type."""
        return [e for e in self.events if isinstance(e, kind)]


class CountingRedactor(Redactor):
    """The default redactor, counting `redact_text` calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def redact_text(self, text: str) -> str:
        self.calls += 1
        return super().redact_text(text)


class NoTerminal:
    """An interactive prompt that is never available (tests must not read the real stdin)."""

    def is_available(self) -> bool:
        return False

    async def ask(self, request: Any) -> None:  # pragma: no cover - never called
        raise AssertionError("no terminal in tests")


def make_replay(data: dict[str, Any], **kwargs: Any) -> Replay:
    """Build a replay from an inline scenario dict, with no terminal."""
    kwargs.setdefault("terminal", NoTerminal())
    return build_replay(parse_scenario(data, "test-scenario"), **kwargs)


@pytest.fixture
def observer() -> RecordingObserver:
    return RecordingObserver()


@pytest.fixture
def run_scenario(
    observer: RecordingObserver,
) -> Callable[..., Awaitable[tuple[TurnOutcome, Replay]]]:
    """Run an inline scenario; returns the outcome and the replay (events, history, audit)."""

    async def run(data: dict[str, Any], **kwargs: Any) -> tuple[TurnOutcome, Replay]:
        kwargs.setdefault("observer", observer)
        replay = make_replay(data, **kwargs)
        outcome = await replay.run()
        return outcome, replay

    return run


@pytest.fixture
def wire() -> Iterator[WireServer]:
    """A started loopback `WireServer` (real HTTP), stopped after the test; script it with
    `wire.script(...)`. Provider tests and whole turns with a real provider share it."""
    server = WireServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def traced() -> Iterator[Traced]:
    """A `Traced` (in-memory spans behind a real span observer), shut down after the test."""
    from .builders import Traced  # builders imports this module

    traced = Traced()
    yield traced
    traced.observer.shutdown(1.0)
    traced.provider.shutdown()
