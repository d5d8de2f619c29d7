"""Steering: messages a user sends while a turn runs, read by the model from the next iteration.

A `SteeringQueue` lives on the turn's `TurnState` (per-message state; nothing global). Whoever
holds the state steers through it: the server's `POST /v1/turns/{turn_id}/steer`, or a library
caller that runs `run_tool_call_loop` in a task and calls `state.steering.steer(text)`. At the
top of each iteration the loop takes every message queued so far and appends each to the
history as a user message, in the order they were sent (redacted like the user's message when
`redact_history` is on); observers get their sizes, never their text (`SteeringMessages`).

When the model answers with no tool call while messages wait, the answer is kept in the
history and the loop goes on, so the model reads what the user sent before the turn ends
(`close_if_idle`: deciding that the turn ends and closing the queue happen in one step, so no
message slips in between). At the iteration cap a graceful summary reads them too. Any other
end (cancelled, aborted, a provider error, `error_at_cap`) closes the queue with messages
still in it: they are dropped and reported as such (`SteeringMessages(applied=False)`).

Risky parts:
- Not thread-safe: call `steer` on the event loop that runs the turn (from another thread,
  through `loop.call_soon_threadsafe`). The server's handlers run on that loop.
- Memory: at most `max_pending` messages wait (`Steered.QUEUE_FULL` beyond, a 429 in server
  mode); each message's size is bounded by whoever accepts it (the server's body limit).
"""

from __future__ import annotations

import collections
import time
from enum import StrEnum
from typing import TYPE_CHECKING

from ..observability.events import SteeringMessages
from .events import TurnEvent
from .history import append_user

if TYPE_CHECKING:
    from .context import ResolvedAgentExecution, TurnState

__all__ = [
    "MAX_PENDING_STEERING",
    "Steered",
    "SteeringQueue",
    "append_steering",
    "drop_steering",
]

MAX_PENDING_STEERING = 64
"""Messages that may wait for the next iteration of one turn."""


class Steered(StrEnum):
    """What `SteeringQueue.steer` did with a message."""

    ACCEPTED = "accepted"
    """Queued: the model reads it from the next iteration on (unless the turn ends first)."""
    TURN_ENDED = "turn_ended"
    """The turn has ended (or is ending): nothing reads it any more."""
    QUEUE_FULL = "queue_full"
    """`max_pending` messages already wait; send it again later."""


class SteeringQueue:
    """The steering messages of one turn, oldest first, until the turn ends.

    Args:
        max_pending: messages that may wait at once (`MAX_PENDING_STEERING`).
    """

    __slots__ = ("_closed", "_max", "_pending")

    def __init__(self, max_pending: int = MAX_PENDING_STEERING) -> None:
        if max_pending < 1:
            raise ValueError("max_pending: must be at least 1")
        self._pending: collections.deque[str] = collections.deque()
        self._max = max_pending
        self._closed = False

    @property
    def closed(self) -> bool:
        """True once the turn ended (or decided to end): `steer` accepts nothing more."""
        return self._closed

    @property
    def pending(self) -> int:
        """Messages waiting for the next iteration."""
        return len(self._pending)

    def steer(self, text: str) -> Steered:
        """Queue `text` for the model to read at the top of the next iteration.

        Returns:
            `Steered.ACCEPTED`, or why it was not: the turn ended, or the queue is full.

        Raises:
            TypeError: `text` is not a string.
            ValueError: `text` is blank (nothing to read).
        """
        if not isinstance(text, str):
            raise TypeError("text: must be a string")
        if not text.strip():
            raise ValueError("text: must not be blank")
        if self._closed:
            return Steered.TURN_ENDED
        if len(self._pending) >= self._max:
            return Steered.QUEUE_FULL
        self._pending.append(text)
        return Steered.ACCEPTED

    def take(self) -> list[str]:
        """Every queued message, oldest first; the queue is left empty (the loop's side)."""
        if not self._pending:
            return []
        taken = list(self._pending)
        self._pending.clear()
        return taken

    def close_if_idle(self) -> bool:
        """Close the queue when nothing waits (the turn may end); else leave it open.

        Returns:
            True when it closed: no message was queued, and none can be any more.
        """
        if self._pending:
            return False
        self._closed = True
        return True

    def close(self) -> list[str]:
        """Close the queue; return the messages no iteration took (the turn ended first)."""
        self._closed = True
        return self.take()


def append_steering(execution: ResolvedAgentExecution, state: TurnState) -> None:
    """Append every queued message to the history as a user message, in order, before
    provider call `state.iteration` (redacted when `redact_history` is on).

    Each reaches a streaming client as a `steering` TurnEvent (`{"text"}`, redacted, like
    the user's message in `turn_start`); observers get their lengths (`SteeringMessages`).
    """
    texts = state.steering.take()
    if not texts:
        return
    redactor = execution.redactor
    history = redactor if execution.config.redact_history else None
    for text in texts:
        append_user(state.messages, text, redactor=history)
        state.events(TurnEvent(type="steering", data={"text": redactor.redact_text(text)}))
    _report(execution, state, texts, applied=True)


def drop_steering(execution: ResolvedAgentExecution, state: TurnState) -> None:
    """Close the queue as the turn ends; report what no iteration took (dropped)."""
    texts = state.steering.close()
    if texts:
        _report(execution, state, texts, applied=False)


def _report(
    execution: ResolvedAgentExecution, state: TurnState, texts: list[str], *, applied: bool
) -> None:
    assert state.correlation is not None
    execution.observer.on_event(
        SteeringMessages(
            correlation=state.correlation,
            iteration=state.iteration,
            lengths=tuple(len(text) for text in texts),
            applied=applied,
            time_ns=time.time_ns(),
        )
    )
