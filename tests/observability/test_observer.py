"""The observer interface: the no-op and the isolating fan-out."""

from __future__ import annotations

import contextlib

from zeroclaw_obs.observability.events import AgentStart, Correlation
from zeroclaw_obs.observability.observer import MultiObserver, NoopObserver, Observer, tool_scope

EVENT = AgentStart(
    correlation=Correlation(turn_id="t", channel="cli", agent_alias="a"),
    provider="p",
    model="m",
    time_ns=1,
)


class Broken:
    def on_event(self, event):
        raise RuntimeError("secret-in-message")


class Keeper:
    def __init__(self):
        self.seen = []

    def on_event(self, event):
        self.seen.append(event)


class TestMultiObserver:
    def test_a_failing_child_does_not_stop_the_others(self, caplog):
        """A child that raises is counted and logged by type; later children still receive."""
        keeper = Keeper()
        multi = MultiObserver([Broken(), keeper])
        multi.on_event(EVENT)
        multi.on_event(EVENT)
        assert [EVENT, EVENT] == keeper.seen
        assert 2 == multi.failures
        assert 1 == len(caplog.records)
        assert "secret-in-message" not in caplog.text

    def test_add_appends(self):
        """`add` appends an observer that receives later events."""
        keeper = Keeper()
        multi = MultiObserver()
        multi.add(keeper)
        multi.on_event(EVENT)
        assert [EVENT] == keeper.seen

    def test_protocol(self):
        """The no-op and the fan-out satisfy the `Observer` protocol."""
        assert isinstance(NoopObserver(), Observer)
        assert isinstance(MultiObserver(), Observer)
        assert NoopObserver().on_event(EVENT) is None


class RaisingScopes:
    def on_event(self, event) -> None:
        return None

    def tool_scope(self, turn_id: str, tool_call_id: str):
        raise RuntimeError("broken tracer")


class MarkingScopes:
    def __init__(self) -> None:
        self.entered: list[tuple[str, str]] = []

    def on_event(self, event) -> None:
        return None

    def tool_scope(self, turn_id: str, tool_call_id: str):
        @contextlib.contextmanager
        def scope():
            self.entered.append((turn_id, tool_call_id))
            yield

        return scope()


class TestToolScope:
    def test_an_observer_without_scopes_gives_an_empty_one(self):
        """`tool_scope` of a plain observer is a no-op context."""
        with tool_scope(NoopObserver(), "t", "c"):
            pass

    def test_a_raising_scope_is_never_the_turns_problem(self):
        """A tracing side that raises gives an empty scope; nothing reaches the engine."""
        with tool_scope(MultiObserver([RaisingScopes()]), "t", "c"):
            pass

    def test_the_fan_out_enters_the_tracing_sides_scope(self):
        """`MultiObserver` hands over the first child's scope, skipping broken ones."""
        marking = MarkingScopes()
        with tool_scope(MultiObserver([NoopObserver(), RaisingScopes(), marking]), "t", "c"):
            pass
        assert [("t", "c")] == marking.entered
