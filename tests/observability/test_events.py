"""Tests for `zeroclaw_obs.observability.events`: events are read-only by contract.

They are not `frozen=True` (a frozen dataclass's `__init__` costs telemetry ~6% of its
instructions a call, issue 17), so what holds the contract is this: after every observer of
the full telemetry chain has read a turn's events, on their own threads, each event is what
the engine built.
"""

from __future__ import annotations

import io
from typing import Any

import pytest

from zeroclaw_obs.observability.events import Correlation, EventIds
from zeroclaw_obs.observability.observer import MultiObserver
from zeroclaw_obs.observability.telemetry import TelemetryOptions, setup_telemetry
from zeroclaw_obs.redaction import Redactor

from ..builders import mixed_turn
from ..conftest import make_replay


class Snapshots:
    """Keeps each event with its `repr` as the engine hands it over (first in a fan-out)."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, str]] = []

    def on_event(self, event: Any) -> None:
        self.seen.append((event, repr(event)))


class TestReadOnly:
    async def test_no_observer_changes_an_event(self, tmp_path):
        """Spans, metrics, logs, progress and the trace tree all read every event of a turn
        with receipts on; after shutdown every event still reads as it was built."""
        progress, logs = io.StringIO(), io.StringIO()
        telemetry = setup_telemetry(
            TelemetryOptions(
                otlp_json=tmp_path / "spans.jsonl", logs=logs, progress=progress, env={}
            ),
            redactor=Redactor(),
        )
        snapshots = Snapshots()
        observer = MultiObserver([snapshots, telemetry.observer])
        for _ in range(2):
            turn = mixed_turn(receipts={"enabled": True})
            await make_replay(turn, observer=observer).run()
        assert telemetry.shutdown(timeout_s=10.0)
        assert logs.getvalue() and progress.getvalue()
        kinds = {type(event).__name__ for event, _ in snapshots.seen}
        assert {"AgentStart", "LlmResponse", "ToolCallStart", "ToolCall", "AgentEnd"} <= kinds
        changed = [before for event, before in snapshots.seen if repr(event) != before]
        assert [] == changed

    def test_events_hash_like_frozen_ones(self):
        """Equal events hash equal, as they did when frozen: an observer (a user's too) may
        keep them in a set or as keys."""
        assert hash(EventIds(root=("a" * 32, "b" * 16))) == hash(
            EventIds(root=("a" * 32, "b" * 16))
        )
        correlation = Correlation(turn_id="t", channel="cli", agent_alias="a")
        assert hash(correlation) == hash(Correlation(turn_id="t", channel="cli", agent_alias="a"))

    def test_an_event_cannot_grow_a_field(self):
        """Slotted: a typo in a field's name is an error, not a new attribute."""
        correlation = Correlation(turn_id="t", channel="cli", agent_alias="a")
        with pytest.raises(AttributeError):
            correlation.turn = "u"  # type: ignore[attr-defined]
