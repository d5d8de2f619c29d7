"""TurnEvents: what a streaming client (or `--events-out`) sees of a turn.

Every result slot produces exactly one `tool_call` (the pending card) and one `tool_result`
with the same id, whatever happened to the call, so every card a client opened is closed.
Payloads are redacted by the engine before an event is built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EventSink", "TurnEvent", "TurnEventLog"]


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnEvent:
    """One streaming event: `tool_call`, `tool_result`, `chunk` or `usage`.

    A `chunk` is a redacted piece of the model's text: one per answer from a provider that
    does not stream, several while one streams (`turn/streaming.py`); they add up to the
    redacted answer.
    """

    type: str
    id: str | None = None
    name: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON-lines shape: `{"type", "id", "name", …data}`."""
        out: dict[str, Any] = {"type": self.type}
        if self.id is not None:
            out["id"] = self.id
        if self.name is not None:
            out["name"] = self.name
        out.update(self.data)
        return out


EventSink = Callable[[TurnEvent], None]
"""Receives TurnEvents on the turn's path; must not block or raise."""


class TurnEventLog:
    """An `EventSink` that keeps events in memory (the CLI writes them at the end)."""

    def __init__(self) -> None:
        self.events: list[TurnEvent] = []

    def __call__(self, event: TurnEvent) -> None:
        self.events.append(event)
