"""Whole turns through the OpenAI-compatible provider over real loopback HTTP.

The retry policy (`turn/provider_call.py`) meets what the provider raises from real status
lines and headers; the streamed text reaches `chunk` TurnEvents; the chat span carries what
the real response said. The provider itself is tested in `tests/providers/test_openai.py`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

from tests.builders import Sleeps
from tests.conftest import RecordingObserver, make_replay
from tests.providers.wire import DONE, Reply, WireServer, sse
from zeroclaw_obs.observability.events import LlmResponse, ProviderAttempt, TurnOutcomeKind
from zeroclaw_obs.providers.openai import OpenAIProvider
from zeroclaw_obs.replay import Replay
from zeroclaw_obs.turn.provider_call import RetryPolicy

KEY = "sk-" + "proj-" + "Zq8Wx7Vc6Bn5Ml4KpL0o9I8uYt6R" + "T3BlbkFJ" + "Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8"
SECRET = "ghp_" + "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb8"
PROMPT = "what is the weather in Paris, my key is hunter2-Zq8Wx7"


def delta(text: str, finish: str | None = None) -> bytes:
    return sse(
        {
            "id": "chatcmpl-BkVu7",
            "object": "chat.completion.chunk",
            "created": 1782955817,
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [
                {"index": 0, "delta": {"content": text}, "logprobs": None, "finish_reason": finish}
            ],
        }
    )


def answer_stream(text: str, piece: int = 6) -> Reply:
    chunks = [delta(text[i : i + piece]) for i in range(0, len(text), piece)]
    return Reply.stream([*chunks, delta("", "stop"), DONE])


def error(status: int, **headers: str) -> Reply:
    body = {"error": {"message": f"echo: {PROMPT}", "type": "server_error", "code": None}}
    return Reply(status=status, headers=headers, body=json.dumps(body).encode())


async def run(wire: WireServer, *replies: Reply, **kwargs: Any) -> tuple[Any, Replay, Sleeps]:
    """One turn against `replies` with a real provider; the policy records waits, never sleeps.

    `cancel_after_s` cancels the turn that long after it starts.
    """
    wire.script(*replies)
    observer = kwargs.pop("observer", RecordingObserver())
    cancel_after_s = kwargs.pop("cancel_after_s", None)
    replay = make_replay({"user": PROMPT, "responses": [{"text": "unused"}]}, observer=observer)
    kwargs.setdefault("timeout_s", 5.0)
    provider = OpenAIProvider(base_url=wire.url + "/v1", model="gpt-4o-mini", api_key=KEY, **kwargs)
    sleeps = Sleeps()
    replay.execution = dataclasses.replace(
        replay.execution, provider=provider, retry=RetryPolicy(sleep=sleeps, jitter=lambda: 0.5)
    )
    timer = None
    if cancel_after_s is not None:
        loop = asyncio.get_running_loop()
        timer = loop.call_later(cancel_after_s, replay.state.cancellation.cancel)
    try:
        return await replay.run(), replay, sleeps
    finally:
        if timer is not None:
            timer.cancel()
        await provider.aclose()


def chunks(replay: Replay) -> list[str]:
    return [e.data["text"] for e in replay.events.events if e.type == "chunk"]


class TestRetriesOverHttp:
    async def test_429_with_retry_after_then_success(self, wire):
        """A 429 with `Retry-After: 2` is waited out and sent again; the answer streams."""
        observer = RecordingObserver()
        outcome, replay, sleeps = await run(
            wire,
            error(429, **{"Retry-After": "2"}),
            answer_stream("Paris is 18C and clear."),
            observer=observer,
        )
        assert (TurnOutcomeKind.FINAL, "Paris is 18C and clear.") == (outcome.kind, outcome.text)
        assert ([2.0], 2) == (sleeps.waits, len(wire.requests))
        (attempt,) = observer.of(ProviderAttempt)
        assert (429, 2.0) == (attempt.status, attempt.wait_s)
        (response,) = observer.of(LlmResponse)
        assert (
            "gpt-4o-mini",
            "gpt-4o-mini-2024-07-18",
            "chatcmpl-BkVu7",
            ("stop",),
            "127.0.0.1",
        ) == (
            response.model,
            response.response_model,
            response.response_id,
            response.finish_reasons,
            response.server_address,
        )
        assert "Paris is 18C and clear." == "".join(chunks(replay))

    async def test_500_three_times_then_the_error_line(self, wire):
        """Three 500s with `max_retries: 2`: the turn ends `error` with one line, nothing else."""
        outcome, replay, sleeps = await run(wire, error(500), error(500), error(500))
        assert TurnOutcomeKind.ERROR == outcome.kind
        assert outcome.text.startswith("provider 'openai': HTTP 500 ")
        assert (3, 2) == (len(wire.requests), len(sleeps.waits))
        shown = " ".join([outcome.text, *chunks(replay)])
        assert "hunter2" not in shown and "echo" not in shown and KEY not in shown

    async def test_a_400_is_not_retried(self, wire):
        """A client error is sent once."""
        outcome, _, sleeps = await run(wire, error(400), answer_stream("never"))
        assert (TurnOutcomeKind.ERROR, 1, []) == (outcome.kind, len(wire.requests), sleeps.waits)


class TestStreamingOverHttp:
    async def test_a_streamed_secret_is_never_sent_in_pieces(self, wire):
        """A token the model streams in 6-character deltas reaches the chunks only redacted."""
        text = ("The forecast for Paris is mild and dry all week. " * 4) + f"Token: {SECRET}. Bye."
        outcome, replay, _ = await run(wire, answer_stream(text))
        sent = chunks(replay)
        assert 1 < len(sent)
        assert replay.execution.redactor.redact_text(text) == "".join(sent)
        assert not any(SECRET[i : i + 8] in "".join(sent) for i in range(len(SECRET) - 7))
        assert text == outcome.text

    async def test_a_cancel_mid_stream_closes_the_request_and_sends_no_held_text(self, wire):
        """A cancel while the answer streams ends the turn cancelled and closes the request."""
        slow = answer_stream("word " * 30, piece=5)
        slow.chunk_delay_s = 0.05
        outcome, replay, sleeps = await run(wire, slow, cancel_after_s=0.3)
        assert (TurnOutcomeKind.CANCELLED, 1, []) == (
            outcome.kind,
            len(wire.requests),
            sleeps.waits,
        )
        assert await asyncio.to_thread(wire.requests[0].disconnected.wait, 5)
        assert "word " * 30 != "".join(chunks(replay))

    async def test_a_drop_after_sent_text_is_not_retried(self, wire):
        """A connection dropped after chunks went out ends the turn; it is not sent again."""
        dropped = answer_stream("word " * 60, piece=5)
        dropped.drop_after = 50
        outcome, replay, _ = await run(wire, dropped, answer_stream("never"))
        assert (TurnOutcomeKind.ERROR, 1) == (outcome.kind, len(wire.requests))
        assert outcome.text == chunks(replay)[-1]

    async def test_a_slow_server_past_the_timeout_is_retried_then_fails(self, wire):
        """A read timeout is retried up to `max_retries`, then ends the turn with its line."""
        slow = [Reply.json({"never": True}, status=200) for _ in range(2)]
        for reply in slow:
            reply.delay_s = 1.0
        wire.script(*slow)
        outcome, _, sleeps = await run(wire, timeout_s=0.2, max_retries=1)
        assert (TurnOutcomeKind.ERROR, 1) == (outcome.kind, len(sleeps.waits))
        assert outcome.text.startswith("provider 'openai': ")
