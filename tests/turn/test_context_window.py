"""Context limits (`turn/context_window.py`, issue 18 item 5): the budget before the first
request, the overflow a provider reports, whole turns only, reported as counts.

Whole turns run on the scripted model and, for the overflow, against real loopback servers
speaking the OpenAI and Anthropic wire formats; spans come from the real OpenTelemetry SDK.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from zeroclaw_obs.errors import ProviderContextOverflowError
from zeroclaw_obs.observability.events import (
    ContextTrimmed,
    ContextTrimReason,
    LlmRequest,
    LlmResponse,
    TurnOutcomeKind,
)
from zeroclaw_obs.observability.logs.logs import LogObserver, build_logger
from zeroclaw_obs.observability.observer import MultiObserver
from zeroclaw_obs.providers.text_protocol import PARSE_ERROR_FEEDBACK, format_tool_results
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.turn.context_window import ContextWindow, estimate_tokens
from zeroclaw_obs.turn.hooks import Hooks
from zeroclaw_obs.turn.loop import SUMMARY_REQUEST

from ..builders import PlayedProvider, Traced, answer, build, chained
from ..conftest import RecordingObserver, make_replay
from ..providers.wire import DONE, Reply, WireServer, anthropic_event, anthropic_text, sse

OLD = "PAYLOAD-of-an-old-turn"
"""Text only the earlier turns hold: it must reach no span and no log line."""

OVERFLOW = {"error": {"error_type": "context_length_exceeded", "status": 400}}
WEATHER_TOOL = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "responses": [{"default": {"output": "18C"}}],
}


def system() -> dict[str, Any]:
    return {"role": "system", "content": "You are terse."}


def old_turn(n: int, size: int = 400) -> list[dict[str, Any]]:
    """One earlier turn: question, a native tool round, answer (about 330 tokens at 400)."""
    return [
        {"role": "user", "content": f"{OLD} question {n} " + "q" * size},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"old{n}",
                    "type": "function",
                    "function": {
                        "name": "get_weather",
                        "arguments": json.dumps({"city": "c" * size}),
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": f"old{n}", "content": f"{OLD} " + "r" * size},
        {"role": "assistant", "content": f"{OLD} answer {n}"},
    ]


def history(turns: int, size: int = 400) -> list[dict[str, Any]]:
    return [system()] + [m for n in range(turns) for m in old_turn(n, size)]


def window_over(messages: list[dict[str, Any]], user: str = "now?") -> ContextWindow:
    messages.append({"role": "user", "content": user})
    return ContextWindow(messages, turn_start=len(messages) - 1, runtime_texts=(SUMMARY_REQUEST,))


def assert_whole(sent: list[dict[str, Any]]) -> None:
    """What is sent opens with a user message after the system one, and every assistant tool
    call is followed by all its results."""
    body = [m for m in sent if m["role"] != "system"]
    assert "user" == body[0]["role"]
    for index, message in enumerate(body):
        if message.get("tool_calls"):
            ids = [c["id"] for c in message["tool_calls"]]
            following = [m.get("tool_call_id") for m in body[index + 1 : index + 1 + len(ids)]]
            assert ids == following
        if message["role"] == "tool":
            assert body[index - 1]["role"] in ("assistant", "tool")


def span_texts(traced: Traced) -> str:
    """Every string of every finished span: names, attributes, events, status descriptions."""
    parts: list[str] = []
    for span in traced.spans:
        parts += [span.name, *(str(v) for v in span.attributes.values())]
        for event in span.events:
            parts += [event.name, *(str(v) for v in event.attributes.values())]
        parts.append(span.status.description or "")
    return "\n".join(parts)


class Watched:
    """A turn's observers: real spans, JSON log lines and the raw events."""

    def __init__(self, traced: Traced) -> None:
        self.traced = traced
        self.stream = io.StringIO()
        self.events = RecordingObserver()
        logs = LogObserver(build_logger(redactor=Redactor(), stream=self.stream))
        self.observer = MultiObserver([chained(traced.observer, logs), self.events])

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stream.getvalue().splitlines()]

    def trims(self) -> list[ContextTrimmed]:
        return self.events.of(ContextTrimmed)

    def root_trims(self) -> list[dict[str, Any]]:
        root = self.traced.root()
        return [dict(e.attributes) for e in root.events if e.name == "zeroclaw.context.trimmed"]


def scripted(
    responses: list[dict[str, Any]], prior: list[dict[str, Any]], observer: Any = None, **config
):
    data = {"user": "And now?", "config": config, "tools": [WEATHER_TOOL], "responses": responses}
    replay = make_replay(data, observer=observer or RecordingObserver())
    replay.state.messages[:] = prior
    return replay


class TestEstimate:
    def test_characters_over_four_plus_four_per_message(self):
        """A message costs ⌈chars/4⌉ + 4: text, and a tool call's id, name and arguments."""
        call = {"id": "ab", "type": "function", "function": {"name": "cd", "arguments": "{}"}}
        messages = [
            {"role": "user", "content": "x" * 9},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "user", "content": [{"type": "text", "text": "y" * 4}]},
        ]
        assert [3 + 4, 2 + 4, 1 + 4] == [estimate_tokens([m]) for m in messages]
        assert 18 == estimate_tokens(messages)


class TestContextWindow:
    def test_nothing_left_out_sends_the_history_itself(self):
        """Under the budget the requests send the history list as it is."""
        messages = history(2)
        window = window_over(messages)
        assert None is window.fit_budget(10**6)
        assert messages is window.messages()

    def test_the_oldest_whole_turns_go_first(self):
        """The budget leaves out the oldest turns, whole, until the estimate fits."""
        messages = history(3)
        window = window_over(messages)
        before = estimate_tokens(messages)
        trim = window.fit_budget(500)
        assert trim is not None
        sent = window.messages()
        assert [system(), *old_turn(2), messages[-1]] == sent
        assert (ContextTrimReason.BUDGET, 8, 2, before, estimate_tokens(sent), 500) == (
            trim.reason,
            trim.messages_dropped,
            trim.turns_dropped,
            trim.tokens_before,
            trim.tokens_after,
            trim.token_budget,
        )
        assert 14 == len(messages)  # the history itself is untouched

    @pytest.mark.parametrize("budget", [1, 50, 150, 300, 400, 700, 900, 1200])
    def test_a_cut_never_splits_a_tool_round(self, budget):
        """Whatever the budget, what is sent starts at a turn and keeps every call's results."""
        messages = history(4)
        window = window_over(messages)
        window.fit_budget(budget)
        assert_whole(window.messages())

    def test_the_turn_itself_always_stays(self):
        """A budget no turn fits leaves out every earlier turn and keeps this one whole."""
        messages = [*history(2), {"role": "user", "content": "big " * 2000}]
        window = ContextWindow(messages, turn_start=len(messages) - 1)
        messages += old_turn(9)[1:]  # this turn's own tool round and answer
        trim = window.fit_budget(1)
        assert trim is not None and 2 == trim.turns_dropped
        assert [system(), *messages[-4:]] == window.messages()
        assert None is window.fit_budget(1)

    def test_no_earlier_turn_no_cut(self):
        """A turn alone in its history cannot be cut."""
        messages = [system()]
        window = window_over(messages, "big " * 5000)
        assert None is window.fit_budget(1)
        assert None is window.after_overflow()

    def test_runtime_user_messages_do_not_start_turns(self):
        """Text-protocol results, parse-error feedback and the summary request belong to the
        turn they are in: no cut lands on them."""
        messages = [system()]
        for n in range(3):
            messages += [
                {"role": "user", "content": f"question {n} " + "q" * 400},
                {"role": "assistant", "content": "<tool_call>{}</tool_call>"},
                {"role": "user", "content": PARSE_ERROR_FEEDBACK},
                {"role": "assistant", "content": '<tool_call>{"name": "x"}</tool_call>'},
                {"role": "user", "content": format_tool_results([("x", "r" * 400)])},
                {"role": "user", "content": SUMMARY_REQUEST},
                {"role": "assistant", "content": "summary"},
            ]
        window = window_over(messages)
        for budget in (1000, 600, 300, 1):
            window.fit_budget(budget)
            first = window.messages()[1]["content"]
            assert first.startswith("question ") or first == "now?"

    def test_after_an_overflow_at_most_two_thirds(self):
        """An overflow leaves out the oldest turns down to two thirds of what was sent, and
        a second one cuts again from there."""
        messages = history(6)
        window = window_over(messages)
        first = window.after_overflow()
        assert first is not None
        assert ContextTrimReason.OVERFLOW == first.reason
        assert first.tokens_before * 2 // 3 == first.token_budget
        assert first.tokens_after <= first.token_budget
        assert estimate_tokens(window.messages()) == first.tokens_after
        second = window.after_overflow()
        assert second is not None and second.tokens_before == first.tokens_after
        assert_whole(window.messages())

    def test_a_system_message_installed_later_moves_nothing(self):
        """The system message the loop may insert mid-turn does not shift the cut."""
        messages = history(3)[1:]
        window = window_over(messages)
        window.fit_budget(500)
        messages.insert(0, system())
        assert [system(), *old_turn(2), messages[-1]] == window.messages()


class TestBudgetInATurn:
    async def test_the_first_request_leaves_out_the_oldest_turns(self, traced):
        """`context_token_budget` cuts before the first request, keeps the cut for the turn,
        leaves the history whole, and reports counts on the turn span and in a log line."""
        watched = Watched(traced)
        replay = scripted(
            [
                {
                    "tool_calls": [
                        {"id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}}
                    ]
                },
                {"text": "18C in Oslo."},
            ],
            history(3),
            observer=watched.observer,
            context_token_budget=500,
            approval={"auto_approve": ["get_weather"]},
        )
        outcome = await replay.run()
        assert (TurnOutcomeKind.FINAL, "18C in Oslo.") == (outcome.kind, outcome.text)
        first, second = (r.messages for r in replay.provider.requests)
        assert [*old_turn(2), {"role": "user", "content": "And now?"}] == first[1:]
        assert first == second[: len(first)]  # the turn's own round follows, nothing older
        assert 17 == len(replay.state.messages)  # 13 before, the user, the round, the answer
        assert [6, 8] == [e.message_count for e in watched.events.of(LlmRequest)]
        full = estimate_tokens(replay.state.messages[:14])  # the history the turn began with
        expected = {
            "zeroclaw.context.reason": "budget",
            "zeroclaw.iteration": 1,
            "zeroclaw.context.messages_dropped": 8,
            "zeroclaw.context.turns_dropped": 2,
            "zeroclaw.context.tokens_before": full,
            "zeroclaw.context.tokens_after": estimate_tokens(first),
            "zeroclaw.context.token_budget": 500,
        }
        assert [expected] == watched.root_trims()
        (line,) = [r for r in watched.lines() if r["event"] == "context_trimmed"]
        assert ("info", "budget", 8, 2, full) == (
            line["level"],
            line["reason"],
            line["messages_dropped"],
            line["turns_dropped"],
            line["tokens_before"],
        )
        assert line["trace_id"] == format(traced.root().context.trace_id, "032x")
        assert OLD not in span_texts(traced) and OLD not in watched.stream.getvalue()

    async def test_no_budget_sends_everything(self, traced):
        """Without `context_token_budget` the whole history is sent and nothing is reported."""
        watched = Watched(traced)
        replay = scripted([{"text": "ok"}], history(3), observer=watched.observer)
        await replay.run()
        assert [14] == [e.message_count for e in watched.events.of(LlmRequest)]
        assert replay.provider.requests[0].messages is replay.state.messages
        assert ([], []) == (watched.trims(), watched.root_trims())


class TestOverflowInATurn:
    async def test_an_overflow_is_retried_once_with_fewer_turns(self, traced):
        """A reported overflow leaves out the oldest turns (at most two thirds of the estimate)
        and sends the request again; the failed call's span says why."""
        watched = Watched(traced)
        replay = scripted([OVERFLOW, {"text": "fine"}], history(4), observer=watched.observer)
        outcome = await replay.run()
        assert (TurnOutcomeKind.FINAL, "fine", 1) == (
            outcome.kind,
            outcome.text,
            outcome.iterations,
        )
        first, second = (r.messages for r in replay.provider.requests)
        first = first[:18]  # what was sent: the history then (the answer was appended since)
        assert [18, len(second)] == [e.message_count for e in watched.events.of(LlmRequest)]
        (trim,) = watched.trims()
        assert (ContextTrimReason.OVERFLOW, estimate_tokens(first)) == (
            trim.reason,
            trim.tokens_before,
        )
        assert estimate_tokens(second) == trim.tokens_after <= trim.tokens_before * 2 // 3
        assert first[0] == second[0] and first[-5:] == second[-5:]
        assert_whole(second)
        failed, answered = watched.events.of(LlmResponse)
        assert ("context_length_exceeded", True) == (failed.error_type, answered.success)
        chats = traced.named("chat")
        assert ["context_length_exceeded", None] == [
            s.attributes.get("error.type") for s in sorted(chats, key=lambda s: s.start_time)
        ]
        (event,) = watched.root_trims()
        assert "overflow" == event["zeroclaw.context.reason"]
        (line,) = [r for r in watched.lines() if r["event"] == "context_trimmed"]
        assert ("warning", "overflow") == (line["level"], line["reason"])
        assert OLD not in span_texts(traced) and OLD not in watched.stream.getvalue()

    async def test_before_llm_call_hooks_see_the_request_sent_again(self):
        """The retry is a request like any other: the hooks see it, cut."""
        seen: list[tuple[int, int]] = []
        hooks = Hooks()
        hooks.add_before_llm(lambda c: seen.append((c.iteration, len(c.messages))))
        data = {"user": "And now?", "responses": [OVERFLOW, {"text": "fine"}]}
        replay = make_replay(data, hooks=hooks)
        replay.state.messages[:] = history(4)
        await replay.run()
        assert [(1, 18), (1, len(replay.provider.requests[1].messages))] == seen
        assert seen[1][1] < 18

    async def test_a_second_overflow_ends_the_turn_as_the_provider_error(self):
        """The retry is sent once: a second overflow ends the turn with the error line."""
        replay = scripted([OVERFLOW, OVERFLOW, {"text": "never"}], history(4))
        outcome = await replay.run()
        line = "provider 'scripted': HTTP 400 context_length_exceeded"
        assert (TurnOutcomeKind.ERROR, line) == (outcome.kind, outcome.text)
        assert (2, 1) == (len(replay.provider.requests), replay.provider.remaining)

    async def test_an_overflow_with_no_earlier_turn_is_the_provider_error(self):
        """A turn that overflows on its own is not retried."""
        replay = scripted([OVERFLOW, {"text": "never"}], [])
        outcome = await replay.run()
        assert TurnOutcomeKind.ERROR == outcome.kind
        assert 1 == len(replay.provider.requests)

    async def test_an_overflow_mid_turn_keeps_the_turns_own_rounds(self):
        """At a later iteration the turn's own tool round is kept whole; older turns go."""
        call = {"id": "c1", "name": "get_weather", "arguments": {"city": "Oslo"}}
        replay = scripted(
            [{"tool_calls": [call]}, OVERFLOW, {"text": "18C"}],
            history(4),
            approval={"auto_approve": ["get_weather"]},
        )
        outcome = await replay.run()
        assert (TurnOutcomeKind.FINAL, 2) == (outcome.kind, outcome.iterations)
        sent = replay.provider.requests[-1].messages
        assert ["c1"] == [m["tool_call_id"] for m in sent if m["role"] == "tool"][-1:]
        assert {"role": "user", "content": "And now?"} in sent
        assert_whole(sent)
        assert len(sent) < len(replay.state.messages)

    async def test_the_overflow_retry_reaches_the_model_through_the_seam(self):
        """The error is the provider's typed overflow: a played provider raising it is retried."""
        provider = PlayedProvider(ProviderContextOverflowError("openai"), answer("ok"))
        replay = build(provider)
        replay.state.messages[:] = history(3)
        outcome = await replay.run()
        assert (TurnOutcomeKind.FINAL, 2) == (outcome.kind, len(provider.requests))
        assert len(provider.requests[1].messages) < len(provider.requests[0].messages)


def openai_answer(text: str) -> Reply:
    def chunk(delta: dict[str, Any], finish: str | None) -> bytes:
        return sse(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 1782955817,
                "model": "gpt-4o-mini",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    return Reply.stream(
        [chunk({"role": "assistant", "content": text}, None), chunk({}, "stop"), DONE]
    )


def anthropic_answer(text: str) -> Reply:
    return Reply.stream(
        [
            *anthropic_text(text),
            anthropic_event("content_block_stop", index=0),
            anthropic_event(
                "message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 3}
            ),
            anthropic_event("message_stop"),
        ]
    )


def real_agent(kind: str, url: str) -> dict[str, Any]:
    return {
        "user": "And now?",
        "provider": {"kind": kind, "base_url": url, "model": "m", "api_key_env": "KEY"},
    }


class TestOverflowOverTheWire:
    async def test_openai_context_length_exceeded(self, wire: WireServer, traced):
        """OpenAI's 400 `context_length_exceeded` is recovered from over real HTTP."""
        body = {
            "error": {
                "message": "This model's maximum context length is 8192 tokens.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        }
        wire.script(Reply.json(body, 400), openai_answer("fine"))
        watched = Watched(traced)
        replay = make_replay(
            real_agent("openai", wire.url + "/v1"), observer=watched.observer, env={"KEY": "k"}
        )
        replay.state.messages[:] = history(4)
        try:
            outcome = await replay.run()
        finally:
            await replay.provider.aclose()
        assert (TurnOutcomeKind.FINAL, "fine") == (outcome.kind, outcome.text)
        first, second = (r.json["messages"] for r in wire.requests)
        assert len(second) < len(first) and first[-1] == second[-1]
        assert_whole(second)
        assert ["overflow"] == [e["zeroclaw.context.reason"] for e in watched.root_trims()]

    async def test_anthropic_prompt_is_too_long(self, wire: WireServer):
        """Anthropic's 400 `prompt is too long` is recovered from over real HTTP; what is sent
        again still opens with a user message."""
        body = {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 208310 tokens > 200000 maximum",
            },
        }
        wire.script(Reply.json(body, 400), anthropic_answer("fine"))
        observer = RecordingObserver()
        replay = make_replay(real_agent("anthropic", wire.url), observer=observer, env={"KEY": "k"})
        replay.state.messages[:] = history(4)
        try:
            outcome = await replay.run()
        finally:
            await replay.provider.aclose()
        assert (TurnOutcomeKind.FINAL, "fine") == (outcome.kind, outcome.text)
        first, second = (r.json["messages"] for r in wire.requests)
        assert len(second) < len(first)
        assert ("user", "And now?") == (second[-1]["role"], second[-1]["content"][0]["text"])
        assert "user" == second[0]["role"]
        (trim,) = observer.of(ContextTrimmed)
        assert ContextTrimReason.OVERFLOW == trim.reason

    async def test_a_second_overflow_over_the_wire_is_the_error_line(self, wire: WireServer):
        """Two overflows in a row end the turn with the provider's one line, after two requests."""
        body = {
            "error": {
                "message": "x",
                "type": "invalid_request_error",
                "code": "context_length_exceeded",
            }
        }
        wire.script(Reply.json(body, 400), Reply.json(body, 400), openai_answer("never"))
        replay = make_replay(real_agent("openai", wire.url + "/v1"), env={"KEY": "k"})
        replay.state.messages[:] = history(4)
        try:
            outcome = await replay.run()
        finally:
            await replay.provider.aclose()
        assert (TurnOutcomeKind.ERROR, "provider 'openai': HTTP 400 context_length_exceeded") == (
            outcome.kind,
            outcome.text,
        )
        assert 2 == len(wire.requests)
