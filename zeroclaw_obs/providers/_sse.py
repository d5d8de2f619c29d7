"""Server-Sent Events as the streaming model APIs send them (the WHATWG event-stream format).

One reader for every streaming provider: lines in, events out. A line `field: value` sets a
field (one leading space after the colon is dropped), `data` lines accumulate joined by `\\n`,
a blank line dispatches the event, a line starting with `:` is a comment (keep-alives), and an
event still pending when the stream ends is discarded, as the format says (a dropped
connection must not look like a finished event).

Risky part: this reads bytes from a network peer. It holds at most one event in memory and
caps an event's data at `MAX_EVENT_CHARS`, so a server that never sends a blank line cannot
grow it without bound; past the cap the reader raises `EventTooLarge` and the provider turns
that into a `ProviderResponseError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

__all__ = ["MAX_EVENT_CHARS", "EventTooLarge", "ServerSentEvent", "aiter_sse"]

MAX_EVENT_CHARS = 16 * 1024 * 1024
"""The most data characters one event may hold (a whole non-streamed response fits easily)."""


class EventTooLarge(Exception):
    """Raised when one event's data passes `MAX_EVENT_CHARS`."""


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One dispatched event."""

    event: str
    """The `event:` field, `message` when the server sent none (OpenAI sends none)."""

    data: str
    """The `data:` lines joined by `\\n`."""


async def aiter_sse(lines: AsyncIterable[str]) -> AsyncIterator[ServerSentEvent]:
    """Turn the lines of an event stream (`httpx.Response.aiter_lines()`) into events.

    Raises:
        EventTooLarge: one event's data passed `MAX_EVENT_CHARS`.
    """
    event = ""
    data: list[str] = []
    size = 0
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if data:
                yield ServerSentEvent(event or "message", "\n".join(data))
            event, data, size = "", [], 0
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            size += len(value) + 1
            if size > MAX_EVENT_CHARS:
                raise EventTooLarge(f"an event passed {MAX_EVENT_CHARS} characters")
            data.append(value)
        elif name == "event":
            event = value
