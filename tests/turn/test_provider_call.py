"""The provider-request step: retries, backoff, streamed chunks and what the observer sees.

The providers here are real `Provider` subclasses behind the seam (an ABC), raising the
seam's own `ProviderError`s: the retry policy above the seam meets exactly what an HTTP
provider raises, with no network. The HTTP side is tested against loopback servers in
`tests/providers/`.
"""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import pytest

from zeroclaw_obs.errors import (
    ProviderConnectionError,
    ProviderResponseError,
    ProviderTimeoutError,
)
from zeroclaw_obs.observability.events import (
    AgentEnd,
    LlmRequest,
    LlmResponse,
    ProviderAttempt,
    TurnOutcomeKind,
)
from zeroclaw_obs.observability.logs.logs import LogObserver, build_logger
from zeroclaw_obs.providers.base import (
    NativeToolCall,
    Provider,
    ProviderResponse,
)
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.replay import Replay
from zeroclaw_obs.turn.loop import TurnOutcome, cap_summary_suffix
from zeroclaw_obs.turn.provider_call import RetryPolicy

from ..builders import Dropped, PlayedProvider, Sleeps, Traced, answer, build, chained, http
from ..conftest import RecordingObserver, make_replay
from ..providers.wire import DONE, Reply, WireServer, anthropic_event, anthropic_text, sse

SECRET = "ghp_" + "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb8"
WEATHER = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "responses": [{"default": {"output": "18C"}}],
}


async def run(provider: Provider, **kwargs: Any) -> tuple[TurnOutcome, Replay]:
    replay = build(provider, **kwargs)
    return await replay.run(), replay


def chunks(replay: Replay) -> list[str]:
    return [e.data["text"] for e in replay.events.events if e.type == "chunk"]


class TestRetryPolicy:
    @pytest.mark.parametrize(("retry", "ceiling"), [(1, 0.5), (2, 1.0), (3, 2.0), (8, 20.0)])
    def test_full_jitter_under_an_exponential_ceiling(self, retry, ceiling):
        """The wait is the jitter times min(cap, base·2ⁿ⁻¹): 0.5 s, 1 s, 2 s … at most 20 s."""
        policy = RetryPolicy(jitter=lambda: 0.999)
        assert ceiling * 0.999 == pytest.approx(policy.wait_s(retry, http(503)))
        assert 0.0 == RetryPolicy(jitter=lambda: 0.0).wait_s(retry, http(503))

    def test_retry_after_is_a_floor(self):
        """A backend's `Retry-After` is waited at least, whatever the jitter drew."""
        policy = RetryPolicy(jitter=lambda: 0.0)
        assert 7.0 == policy.wait_s(1, http(429, retry_after=7.0))

    def test_a_short_retry_after_does_not_cut_the_backoff(self):
        """A `Retry-After` shorter than the backoff leaves the backoff."""
        policy = RetryPolicy(jitter=lambda: 0.5)
        assert 1.0 == policy.wait_s(3, http(429, retry_after=0.1))

    def test_retry_after_is_bounded(self):
        """A backend that asks for an hour gets `retry_after_limit_s`."""
        policy = RetryPolicy(jitter=lambda: 0.0)
        assert 60.0 == policy.wait_s(1, http(429, retry_after=3600.0))

    @pytest.mark.parametrize("after", [float("nan"), float("inf"), -5.0, 0.0])
    def test_a_meaningless_retry_after_is_ignored(self, after):
        """A non-finite, negative or zero `Retry-After` leaves the backoff alone."""
        policy = RetryPolicy(jitter=lambda: 0.5)
        assert 0.25 == policy.wait_s(1, http(429, retry_after=after))


class TestRetries:
    async def test_429_with_retry_after_then_success(self):
        """A 429 is retried after its `Retry-After`; the turn then ends with the answer."""
        sleeps, observer = Sleeps(), RecordingObserver()
        provider = PlayedProvider(http(429, "rate_limit_error", retry_after=3.0), answer())
        outcome, _ = await run(provider, sleep=sleeps, observer=observer)
        assert (TurnOutcomeKind.FINAL, "Paris is 18C.") == (outcome.kind, outcome.text)
        assert [3.0] == sleeps.waits
        (attempt,) = observer.of(ProviderAttempt)
        assert (1, 1, "rate_limit_error", 429, 3.0) == (
            attempt.iteration,
            attempt.attempt,
            attempt.error_type,
            attempt.status,
            attempt.wait_s,
        )
        (response,) = observer.of(LlmResponse)
        assert (True, 2) == (response.success, response.attempts)

    @pytest.mark.parametrize(
        "error",
        [
            http(500),
            http(503, "overloaded_error"),
            ProviderTimeoutError("openai", "timeout"),
            ProviderConnectionError("openai", "connect_error"),
        ],
        ids=["500", "503", "timeout", "connect"],
    )
    async def test_retryable_errors_are_retried(self, error):
        """5xx, timeouts and connect errors are sent again."""
        provider = PlayedProvider(error, answer())
        outcome, _ = await run(provider)
        assert TurnOutcomeKind.FINAL == outcome.kind
        assert 2 == len(provider.requests)

    async def test_500_three_times_ends_the_turn_with_the_error_line(self):
        """After `max_retries` retries the last error ends the turn: `error`, one line."""
        sleeps, observer = Sleeps(), RecordingObserver()
        provider = PlayedProvider(http(500), http(500), http(500), max_retries=2)
        outcome, replay = await run(provider, sleep=sleeps, observer=observer)
        line = "provider 'openai': HTTP 500 http_500"
        assert (TurnOutcomeKind.ERROR, line, line) == (outcome.kind, outcome.text, outcome.error)
        assert 3 == len(provider.requests)
        assert [0.25, 0.5] == sleeps.waits  # jitter 0.5 of 0.5 s, then of 1 s
        assert [1, 2] == [a.attempt for a in observer.of(ProviderAttempt)]
        (response,) = observer.of(LlmResponse)
        assert (False, "http_500", line, 3) == (
            response.success,
            response.error_type,
            response.error,
            response.attempts,
        )
        (end,) = observer.of(AgentEnd)
        assert (TurnOutcomeKind.ERROR, line) == (end.outcome, end.error)
        assert [line] == chunks(replay)

    @pytest.mark.parametrize(
        "error",
        [http(400, "invalid_request_error"), http(401), ProviderResponseError("openai", "x")],
        ids=["400", "401", "invalid_response"],
    )
    async def test_non_retryable_errors_are_never_retried(self, error):
        """A 4xx other than 429, or a response in no known format, ends the turn at once."""
        sleeps = Sleeps()
        provider = PlayedProvider(error, answer())
        outcome, _ = await run(provider, sleep=sleeps)
        assert (TurnOutcomeKind.ERROR, error.line()) == (outcome.kind, outcome.text)
        assert (1, []) == (len(provider.requests), sleeps.waits)

    async def test_max_retries_zero_sends_once(self):
        """A provider with `max_retries: 0` is never retried."""
        provider = PlayedProvider(http(503), answer(), max_retries=0)
        outcome, _ = await run(provider)
        assert TurnOutcomeKind.ERROR == outcome.kind
        assert 1 == len(provider.requests)

    async def test_cancel_during_the_backoff_cancels_the_turn(self):
        """A cancel while waiting to retry ends the turn as cancelled; nothing is sent again."""
        replay: Replay | None = None

        async def sleep(seconds: float) -> None:
            assert replay is not None
            replay.state.cancellation.cancel()
            await asyncio.sleep(30)

        observer = RecordingObserver()
        provider = PlayedProvider(http(503), answer())
        replay = build(provider, sleep=sleep, observer=observer)
        outcome = await replay.run()
        assert TurnOutcomeKind.CANCELLED == outcome.kind
        assert 1 == len(provider.requests)
        (response,) = observer.of(LlmResponse)
        assert (False, "cancelled", None, 1) == (
            response.success,
            response.error_type,
            response.error,
            response.attempts,
        )

    async def test_the_error_line_never_holds_the_prompt_or_the_key(self):
        """The turn's error names provider, status and type; the user's message is not in it."""
        provider = PlayedProvider(http(500), http(500), http(500))
        data = {"user": f"my key is {SECRET}", "responses": [{"text": "unused"}]}
        outcome, replay = await run(provider, data=data)
        shown = " ".join([outcome.text, *chunks(replay)])
        assert "my key" not in shown and SECRET not in shown


class TestStreamedChunks:
    async def test_streamed_text_arrives_as_several_redacted_chunks(self):
        """A streamed answer goes out chunk by chunk, redacted, and is not sent again whole."""
        text = ("The weather in Paris is mild today. " * 8) + f"Your token {SECRET} ends here."
        provider = PlayedProvider(answer(text), piece=5)
        outcome, replay = await run(provider)
        sent = chunks(replay)
        assert 1 < len(sent)
        assert replay.execution.redactor.redact_text(text) == "".join(sent)
        assert not any(SECRET[:8] in piece for piece in sent)
        assert text == outcome.text

    async def test_a_secret_split_across_deltas_never_leaks(self):
        """A token handed over a few characters at a time is sent only as its marker."""
        text = f"token: {SECRET} and then some more words to push the lookahead along. " * 3
        provider = PlayedProvider(answer(text), piece=3)
        _, replay = await run(provider)
        joined = "".join(chunks(replay))
        pieces = {SECRET[i : i + 8] for i in range(len(SECRET) - 7)}
        assert [] == [p for p in pieces if p in joined]

    async def test_a_provider_that_does_not_stream_gets_one_chunk(self):
        """Without deltas the answer is one chunk with the redacted text, as for a script."""
        provider = PlayedProvider(answer(f"your token is {SECRET}"))
        _, replay = await run(provider)
        assert ["your token is [REDACTED:github_token]"] == chunks(replay)

    async def test_text_before_tool_calls_streams_then_the_answer(self):
        """Text streamed with a tool round goes out before its cards; the answer after them."""
        round_one = ProviderResponse(
            text="Let me check. ",
            tool_calls=[NativeToolCall(id="c1", name="get_weather", arguments={"city": "x"})],
        )
        provider = PlayedProvider(round_one, answer("It is 18C."), piece=4)
        data = {
            "user": "weather?",
            "config": {"approval": {"auto_approve": ["get_weather"]}},
            "tools": [WEATHER],
            "responses": [{"text": "unused"}],
        }
        _, replay = await run(provider, data=data)
        kinds = [e.type for e in replay.events.events if e.type != "usage"]
        runs = [kind for i, kind in enumerate(kinds) if i == 0 or kinds[i - 1] != kind]
        assert ["chunk", "tool_call", "tool_result", "chunk"] == runs
        assert "Let me check. It is 18C." == "".join(chunks(replay))

    async def test_a_streamed_summary_at_the_cap_gets_only_the_suffix(self):
        """At the iteration cap the streamed summary is not sent twice: the suffix follows it."""
        round_one = ProviderResponse(
            tool_calls=[NativeToolCall(id="c1", name="get_weather", arguments={"city": "x"})]
        )
        provider = PlayedProvider(round_one, answer("Found 18C.\n"), piece=3)
        data = {
            "user": "weather?",
            "config": {"max_tool_iterations": 1, "approval": {"auto_approve": ["get_weather"]}},
            "tools": [WEATHER],
            "responses": [{"text": "unused"}],
        }
        outcome, replay = await run(provider, data=data)
        suffix = cap_summary_suffix(1)
        assert (TurnOutcomeKind.MAX_ITERATIONS, "Found 18C." + suffix) == (
            outcome.kind,
            outcome.text,
        )
        assert ["Found 18C.\n", suffix] == chunks(replay)

    async def test_a_dropped_stream_that_sent_text_is_not_retried(self):
        """Once a chunk went out, a dropped stream ends the turn: a client cannot unsee it."""
        sent_text = "word " * 40
        drop = Dropped(sent_text, ProviderConnectionError("openai", "connection_dropped"))
        provider = PlayedProvider(drop, answer(), piece=10)
        outcome, replay = await run(provider)
        assert TurnOutcomeKind.ERROR == outcome.kind
        assert 1 == len(provider.requests)
        assert chunks(replay)[-1] == outcome.text

    async def test_a_dropped_stream_that_sent_nothing_is_retried(self):
        """Text held back and never sent is dropped with its attempt, and the request retried."""
        drop = Dropped("Par", ProviderConnectionError("openai", "connection_dropped"))
        provider = PlayedProvider(drop, answer("Paris is 18C."), piece=1)
        outcome, replay = await run(provider)
        assert (TurnOutcomeKind.FINAL, 2) == (outcome.kind, len(provider.requests))
        assert "Paris is 18C." == "".join(chunks(replay))

    async def test_every_request_can_stream(self):
        """Each request carries an `on_text` for a streaming provider to call."""
        provider = PlayedProvider(answer())
        await run(provider)
        assert all(callable(r.on_text) for r in provider.requests)


class TestObserverEvents:
    async def test_response_fields_reach_the_event_redacted(self):
        """Response model, id and finish reasons, and the server address, are shown redacted."""
        observer = RecordingObserver()
        provider = PlayedProvider(
            answer(
                model=f"gpt-test-2025 {SECRET}",
                response_id=f"chatcmpl-{SECRET}",
                finish_reasons=("stop",),
            ),
            server_address=f"{SECRET}.example.test",
            server_port=8443,
        )
        await run(provider, observer=observer)
        (response,) = observer.of(LlmResponse)
        assert (
            "gpt-test",
            "gpt-test-2025 [REDACTED:github_token]",
            "chatcmpl-[REDACTED:github_token]",
            ("stop",),
            "[REDACTED:github_token].example.test",
            8443,
        ) == (
            response.model,
            response.response_model,
            response.response_id,
            response.finish_reasons,
            response.server_address,
            response.server_port,
        )

    async def test_one_request_and_one_response_per_call_whatever_the_retries(self):
        """Retries are `ProviderAttempt`s inside one call: one `LlmRequest`, one `LlmResponse`."""
        observer = RecordingObserver()
        provider = PlayedProvider(http(502), http(429), answer(), max_retries=3)
        await run(provider, observer=observer)
        kinds = [
            type(e).__name__
            for e in observer.events
            if isinstance(e, LlmRequest | LlmResponse | ProviderAttempt)
        ]
        assert ["LlmRequest", "ProviderAttempt", "ProviderAttempt", "LlmResponse"] == kinds

    async def test_usage_is_a_turn_event(self):
        """The provider's usage goes out as a `usage` TurnEvent."""
        _, replay = await run(PlayedProvider(answer()))
        (usage,) = [e for e in replay.events.events if e.type == "usage"]
        assert {"input_tokens": 10, "output_tokens": 5} == usage.data


class Interrupted(Provider):
    """Streams `text` in pieces, then has the turn cancelled and waits (a user's Ctrl-C in the
    middle of an answer)."""

    def __init__(self, text: str, cancel: Any) -> None:
        self.text = text
        self.cancel = cancel
        self.requests: list[Any] = []

    async def complete(self, request: Any) -> ProviderResponse:
        self.requests.append(request)
        for i in range(0, len(self.text), 7):
            request.on_text(self.text[i : i + 7])
            await asyncio.sleep(0)
        self.cancel()
        await asyncio.sleep(30)
        raise AssertionError("not cancelled")


def assistant_texts(replay: Replay) -> list[str]:
    return [m["content"] for m in replay.state.messages if m["role"] == "assistant"]


PARTIAL = "The weather in Paris is mild today, with a light breeze from the west. " * 3


class TestInterruptedStreams:
    async def test_a_provider_error_keeps_the_partial_text(self):
        """A stream a provider error cuts stays in history: `{partial}\\n\\n[stream interrupted]`;
        the client's chunks end with the same text, then the error line."""
        drop = Dropped(PARTIAL, ProviderConnectionError("openai", "connection_dropped"))
        provider = PlayedProvider(drop, answer(), piece=9)
        outcome, replay = await run(provider)
        assert (TurnOutcomeKind.ERROR, 1) == (outcome.kind, len(provider.requests))
        kept = f"{PARTIAL}\n\n[stream interrupted]"
        assert [kept] == assistant_texts(replay)
        sent = chunks(replay)
        assert (kept, outcome.text) == ("".join(sent[:-1]), sent[-1])

    async def test_the_partial_reaches_no_span_or_log_line(self):
        """Keeping the partial adds no payload to telemetry: spans and logs carry none of it."""
        traced = Traced()
        stream = io.StringIO()
        logs = LogObserver(build_logger(redactor=Redactor(), stream=stream))
        drop = Dropped(PARTIAL, ProviderConnectionError("openai", "connection_dropped"))
        try:
            await run(PlayedProvider(drop, piece=9), observer=chained(traced.observer, logs))
            spans = traced.spans
        finally:
            traced.observer.shutdown(1.0)
            traced.provider.shutdown()
        texts = [json.dumps(dict(s.attributes)) for s in spans]
        texts += [json.dumps(dict(e.attributes)) for s in spans for e in s.events]
        texts += [s.status.description or "" for s in spans]
        assert ["connection_dropped"] == [
            s.attributes["error.type"] for s in spans if s.name.startswith("chat")
        ]
        assert [] == [t for t in [*texts, stream.getvalue()] if "light breeze" in t]

    async def test_the_partial_is_redacted_with_redact_history(self):
        """With `redact_history` on (default) the kept partial is redacted like all history."""
        text = f"{PARTIAL}your token {SECRET} and more words after it to push it along " * 2
        drop = Dropped(text, ProviderConnectionError("openai", "connection_dropped"))
        _, replay = await run(PlayedProvider(drop, piece=5))
        (kept,) = assistant_texts(replay)
        redacted = replay.execution.redactor.redact_text(text)
        assert f"{redacted}\n\n[stream interrupted]" == kept
        assert SECRET not in kept and SECRET not in "".join(chunks(replay))

    async def test_redact_history_off_keeps_the_raw_partial(self):
        """With `redact_history` off the history keeps the model's words as they came."""
        text = f"{PARTIAL}your token {SECRET} ends here and then the stream breaks apart " * 2
        drop = Dropped(text, ProviderConnectionError("openai", "connection_dropped"))
        data = {"user": "hi", "config": {"redact_history": False}, "responses": [{"text": "x"}]}
        _, replay = await run(PlayedProvider(drop, piece=5), data=data)
        assert [f"{text}\n\n[stream interrupted]"] == assistant_texts(replay)
        assert SECRET not in "".join(chunks(replay))

    async def test_text_held_back_then_retries_exhausted_is_kept(self):
        """A partial that never reached the client is still kept once no retry is left."""
        drop = Dropped("Par", ProviderConnectionError("openai", "connection_dropped"))
        _, replay = await run(PlayedProvider(drop, piece=1, max_retries=0))
        assert ["Par\n\n[stream interrupted]"] == assistant_texts(replay)

    async def test_a_retried_attempt_leaves_no_partial(self):
        """Text of an attempt that is retried is dropped with it: the history has the answer."""
        drop = Dropped("Par", ProviderConnectionError("openai", "connection_dropped"))
        _, replay = await run(PlayedProvider(drop, answer("Paris is 18C."), piece=1))
        assert ["Paris is 18C."] == assistant_texts(replay)

    async def test_an_error_before_any_text_adds_nothing(self):
        """A provider error with no text streamed leaves no assistant message."""
        _, replay = await run(PlayedProvider(http(400, "invalid_request_error")))
        assert [] == assistant_texts(replay)

    async def test_a_cancel_mid_stream_keeps_the_partial_text(self):
        """The turn's cancel in the middle of an answer keeps `{partial}\\n\\n[interrupted by
        user]` in history; the turn ends as cancelled and its chunks end with the marker."""
        replay: Replay | None = None

        def cancel() -> None:
            assert replay is not None
            replay.state.cancellation.cancel()

        provider = Interrupted(PARTIAL, cancel)
        observer = RecordingObserver()
        replay = build(provider, observer=observer)
        outcome = await replay.run()
        assert TurnOutcomeKind.CANCELLED == outcome.kind
        kept = f"{PARTIAL}\n\n[interrupted by user]"
        assert [kept] == assistant_texts(replay)
        assert kept == "".join(chunks(replay))
        (response,) = observer.of(LlmResponse)
        assert "cancelled" == response.error_type

    async def test_a_cancel_during_a_backoff_keeps_no_partial(self):
        """A cancel while waiting to retry leaves no partial: the failed attempt is over."""
        replay: Replay | None = None

        async def sleep(seconds: float) -> None:
            assert replay is not None
            replay.state.cancellation.cancel()
            await asyncio.sleep(30)

        drop = Dropped("Par", ProviderConnectionError("openai", "connection_dropped"))
        replay = build(PlayedProvider(drop, answer(), piece=1), sleep=sleep)
        outcome = await replay.run()
        assert (TurnOutcomeKind.CANCELLED, []) == (outcome.kind, assistant_texts(replay))


def openai_chunk(content: str | None = None, finish: str | None = None) -> bytes:
    delta = {} if content is None else {"content": content}
    return sse(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1782955817,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def real_agent(kind: str, url: str) -> dict[str, Any]:
    return {
        "user": "weather?",
        "provider": {"kind": kind, "base_url": url, "model": "m", "api_key_env": "KEY"},
    }


async def run_real(data: dict[str, Any], on_chunk: Any = None) -> tuple[TurnOutcome, Replay]:
    replay = make_replay(data, env={"KEY": "k"})
    if on_chunk is not None:
        log = replay.state.events

        def sink(event: Any) -> None:
            log(event)
            if event.type == "chunk":
                on_chunk(replay)

        replay.state.events = sink
    try:
        return await replay.run(), replay
    finally:
        await replay.provider.aclose()


WORDS = [f"word{n} " * 6 for n in range(40)]


class TestInterruptedStreamsOverTheWire:
    async def test_openai_connection_dropped_mid_answer(self, wire: WireServer):
        """A Chat Completions stream cut after text reached the client keeps it in history."""
        replies = [openai_chunk(w) for w in WORDS[:6]] + [openai_chunk(finish="stop"), DONE]
        wire.script(Reply.stream(replies, drop_after=6))
        outcome, replay = await run_real(real_agent("openai", wire.url + "/v1"))
        assert (TurnOutcomeKind.ERROR, "provider 'openai': connection_dropped") == (
            outcome.kind,
            outcome.text,
        )
        assert 1 == len(wire.requests)
        assert ["".join(WORDS[:6]) + "\n\n[stream interrupted]"] == assistant_texts(replay)

    async def test_anthropic_error_event_mid_answer(self, wire: WireServer):
        """An `event: error` after text reached the client ends the turn with the error and
        keeps the partial answer, marked."""
        error = anthropic_event("error", error={"type": "overloaded_error", "message": "x"})
        wire.script(Reply.stream([*anthropic_text(*WORDS[:5]), error]))
        outcome, replay = await run_real(real_agent("anthropic", wire.url))
        assert "provider 'anthropic': HTTP 529 overloaded_error" == outcome.text
        assert ["".join(WORDS[:5]) + "\n\n[stream interrupted]"] == assistant_texts(replay)

    async def test_a_cancel_mid_answer_over_http(self, wire: WireServer):
        """A cancel while the server still streams closes the request and keeps what came."""
        replies = [openai_chunk(w) for w in WORDS] + [openai_chunk(finish="stop"), DONE]
        wire.script(Reply.stream(replies, chunk_delay_s=0.05))
        outcome, replay = await run_real(
            real_agent("openai", wire.url + "/v1"),
            on_chunk=lambda r: r.state.cancellation.cancel(),
        )
        assert TurnOutcomeKind.CANCELLED == outcome.kind
        (kept,) = assistant_texts(replay)
        partial = kept.removesuffix("\n\n[interrupted by user]")
        assert partial != kept and partial and "".join(WORDS).startswith(partial)
        assert await asyncio.to_thread(wire.requests[0].disconnected.wait, 5)
