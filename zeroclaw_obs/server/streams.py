"""A turn's events as clients read them: `TurnHandle` keeps every event of one turn (a late
reader gets the turn from its start), `OperatorFeed` fans every turn's events out to the
operator page's stream, dropping a subscriber that falls `FEED_LAG_LIMIT` events behind."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator
from typing import Any

from ..turn.context import TurnState
from ..turn.events import TurnEvent

__all__ = ["FEED_LAG_LIMIT", "PING_S", "OperatorFeed", "TurnHandle"]


FEED_LAG_LIMIT = 1000
"""Events an operator-stream subscriber may fall behind before it is disconnected."""


PING_S = 15.0
"""Seconds between SSE comment lines on an idle stream."""


class TurnHandle:
    """One turn as clients see it: status, outcome and every event so far, in order."""

    def __init__(self, turn_id: str, conversation_id: str, feed: OperatorFeed) -> None:
        self.turn_id = turn_id
        self.conversation_id = conversation_id
        self.events: list[dict[str, Any]] = []
        """Every event of the turn, JSON-ready, in order; `turn_end` is last once done."""
        self.outcome: str | None = None
        self.text: str | None = None
        self.state: TurnState | None = None
        self.task: asyncio.Task[None] | None = None
        self._feed = feed
        self._changed = asyncio.Event()

    @property
    def done(self) -> bool:
        return self.outcome is not None

    def status(self) -> dict[str, Any]:
        """`GET /v1/turns/{turn_id}`."""
        return {
            "turn_id": self.turn_id,
            "conversation_id": self.conversation_id,
            "status": "done" if self.done else "running",
            "outcome": self.outcome,
            "text": self.text,
        }

    def publish(self, event: dict[str, Any]) -> None:
        """Append one event and wake every follower (never blocks, never raises)."""
        if self.done:
            return  # nothing follows `turn_end`
        self.events.append(event)
        self._feed.publish(self, event)
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def on_turn_event(self, event: TurnEvent) -> None:
        """The turn's `EventSink`."""
        self.publish(event.to_json_dict())

    def finish(self, outcome: str, text: str) -> None:
        """Publish `turn_end`; the handle is done."""
        self.publish({"type": "turn_end", "outcome": outcome, "text": text})
        self.outcome, self.text = outcome, text

    async def follow(self, after: int = 0) -> AsyncIterator[tuple[int, dict[str, Any]] | None]:
        """Events numbered from 1, those after `after` first, then live; None every `PING_S`
        while idle; ends after `turn_end`."""
        index = max(0, after)
        while True:
            changed = self._changed
            while index < len(self.events):
                index += 1
                yield index, self.events[index - 1]
            if self.done:
                return
            try:
                await asyncio.wait_for(changed.wait(), PING_S)
            except TimeoutError:
                yield None


class _Subscriber:
    def __init__(self) -> None:
        self.queue: collections.deque[dict[str, Any]] = collections.deque()
        self.wake = asyncio.Event()
        self.closed = False


class OperatorFeed:
    """Every event of every turn, with its `turn_id`, for the operator stream (`/v1/events`)."""

    def __init__(self) -> None:
        self._subscribers: set[_Subscriber] = set()

    def publish(self, turn: TurnHandle, event: dict[str, Any]) -> None:
        if not self._subscribers:
            return
        tagged = {**event, "turn_id": turn.turn_id}
        for subscriber in list(self._subscribers):
            self._push(subscriber, tagged)

    def _push(self, subscriber: _Subscriber, event: dict[str, Any]) -> None:
        if len(subscriber.queue) >= FEED_LAG_LIMIT:
            subscriber.closed = True  # too slow: it reconnects and replays what is running
            self._subscribers.discard(subscriber)
        else:
            subscriber.queue.append(event)
        subscriber.wake.set()

    async def follow(self, running: list[TurnHandle]) -> AsyncIterator[dict[str, Any] | None]:
        """The running turns' events so far, then every event live; None every `PING_S`."""
        subscriber = _Subscriber()
        for turn in running:  # no await between the replay and the subscription
            for event in turn.events:
                subscriber.queue.append({**event, "turn_id": turn.turn_id})
        self._subscribers.add(subscriber)
        try:
            while True:
                while subscriber.queue:
                    yield subscriber.queue.popleft()
                if subscriber.closed:
                    return
                subscriber.wake.clear()
                try:
                    await asyncio.wait_for(subscriber.wake.wait(), PING_S)
                except TimeoutError:
                    yield None
        finally:
            self._subscribers.discard(subscriber)

    def close(self) -> None:
        """End every operator stream (at shutdown)."""
        for subscriber in list(self._subscribers):
            subscriber.closed = True
            subscriber.wake.set()
        self._subscribers.clear()
