"""Tests for `zeroclaw_obs.providers._sse`: the event-stream reader of streaming providers."""

from __future__ import annotations

import pytest

from zeroclaw_obs.providers import _sse
from zeroclaw_obs.providers._sse import EventTooLarge, ServerSentEvent, aiter_sse


async def _lines(*lines: str):
    for line in lines:
        yield line


async def events(*lines: str) -> list[ServerSentEvent]:
    return [e async for e in aiter_sse(_lines(*lines))]


class TestAiterSse:
    async def test_openai_style_data_lines(self):
        """Events without `event:` are `message`; `[DONE]` is just data to the reader."""
        got = await events('data: {"a":1}', "", "data: [DONE]", "")
        assert [ServerSentEvent("message", '{"a":1}'), ServerSentEvent("message", "[DONE]")] == got

    async def test_anthropic_style_named_events(self):
        """`event:` names the event; one leading space of a value is dropped, not more."""
        got = await events("event: message_start", 'data:  {"x":1}', "")
        assert [ServerSentEvent("message_start", ' {"x":1}')] == got

    async def test_multi_line_data_comments_and_crlf(self):
        """Data lines join with `\\n`; comments (keep-alives) are skipped; CRLF is a line end."""
        got = await events(": ping", "data: a\r\n", "data: b", "\r\n")
        assert [ServerSentEvent("message", "a\nb")] == got

    async def test_an_event_cut_off_by_the_end_is_discarded(self):
        """A dropped connection never looks like a finished event."""
        assert [] == await events("data: {partial")

    async def test_an_endless_event_is_refused(self, monkeypatch):
        """Data past `MAX_EVENT_CHARS` without a blank line raises `EventTooLarge`."""
        monkeypatch.setattr(_sse, "MAX_EVENT_CHARS", 10)
        with pytest.raises(EventTooLarge):
            await events("data: 123456", "data: 7890")
