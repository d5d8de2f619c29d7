"""The observer interface: the no-op and the isolating fan-out."""

from __future__ import annotations

from zeroclaw_obs.observability.events import AgentStart, Correlation
from zeroclaw_obs.observability.observer import MultiObserver, NoopObserver, Observer

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
