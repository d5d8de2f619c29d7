"""End-to-end turns from inline scenarios: every end state of `run_tool_call_loop`."""

from __future__ import annotations

import asyncio

import pytest

from zeroclaw_obs.errors import ScenarioExhaustedError
from zeroclaw_obs.observability.events import AgentEnd, ToolOutcome, TurnOutcomeKind
from zeroclaw_obs.providers.text_protocol import PARSE_FAILURE_FINAL

PARIS_TAG = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
OSLO_TAG = '<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
WEATHER = {
    "name": "get_weather",
    "description": "Current weather for a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
    "responses": [
        {"when": {"city": "Paris"}, "output": "18C"},
        {"when": {"city": "Oslo"}, "output": "4C"},
        {"default": {"error": "city not found"}},
    ],
}
AUTO = {"approval": {"auto_approve": ["get_weather", "tool_search"]}}


def call(name: str, cid: str, **arguments: object) -> dict:
    return {"id": cid, "name": name, "arguments": arguments}


class TestFinalText:
    async def test_final_answer_after_a_tool_round(self, run_scenario):
        """A text response with no calls ends the turn as final, with that text."""
        outcome, replay = await run_scenario(
            {
                "user": "weather in Paris?",
                "config": AUTO,
                "tools": [WEATHER],
                "responses": [
                    {"tool_calls": [call("get_weather", "c1", city="Paris")]},
                    {"text": "Paris is 18C."},
                ],
            }
        )
        assert TurnOutcomeKind.FINAL == outcome.kind
        assert "Paris is 18C." == outcome.text
        assert 2 == outcome.iterations
        assert {"role": "tool", "tool_call_id": "c1", "content": "18C"} in replay.state.messages
        assert {"role": "assistant", "content": "Paris is 18C."} == replay.state.messages[-1]

    async def test_text_protocol_call_in_a_native_response(self, run_scenario):
        """A `<tool_call>` tag in a native provider's text is a call, answered as text results."""
        outcome, replay = await run_scenario(
            {
                "user": "weather in Oslo?",
                "config": AUTO,
                "tools": [WEATHER],
                "responses": [
                    {"text": OSLO_TAG},
                    {"text": "Oslo is 4C."},
                ],
            }
        )
        assert "Oslo is 4C." == outcome.text
        results = [m for m in replay.state.messages if m["role"] == "user"]
        assert results[-1]["content"].startswith("[Tool results]\n")
        assert '<tool_result name="get_weather">' in results[-1]["content"]


class TestCancelled:
    async def test_cancel_during_a_tool_ends_cancelled(self, run_scenario):
        """`cancel_after_ms` during a slow call interrupts it and ends the turn as cancelled."""
        slow = {**WEATHER, "responses": [{"default": {"output": "late", "delay_ms": 2000}}]}
        outcome, replay = await run_scenario(
            {
                "user": "go",
                "config": AUTO,
                "tools": [slow],
                "responses": [
                    {"tool_calls": [call("get_weather", "c1", city="Paris")]},
                    {"text": "never"},
                ],
                "cancel_after_ms": 50,
            }
        )
        assert TurnOutcomeKind.CANCELLED == outcome.kind
        results = [e for e in replay.events.events if e.type == "tool_result"]
        assert ["interrupted"] == [e.data["outcome"] for e in results]
        tool_msg = replay.state.messages[-1]
        assert "[interrupted by user before this tool produced a result]" == tool_msg["content"]
        assert 1 == replay.provider.remaining

    async def test_cancel_before_the_first_call_ends_immediately(self, run_scenario):
        """Cancellation before a provider call ends the turn without calling the provider."""
        outcome, replay = await run_scenario(
            {"user": "go", "responses": [{"text": "never"}], "cancel_after_ms": 0}
        )
        assert TurnOutcomeKind.CANCELLED == outcome.kind
        assert 1 == replay.provider.remaining

    async def test_cancel_does_not_leak_into_the_caller(self, run_scenario):
        """After a cancelled turn the calling task can await again (the cancel was absorbed)."""
        slow = {**WEATHER, "responses": [{"default": {"output": "late", "delay_ms": 2000}}]}
        await run_scenario(
            {
                "user": "go",
                "config": AUTO,
                "tools": [slow],
                "responses": [{"tool_calls": [call("get_weather", "c1", city="Paris")]}],
                "cancel_after_ms": 20,
            }
        )
        await asyncio.sleep(0.01)
        assert 0 == asyncio.current_task().cancelling()


class TestAborted:
    async def test_loop_detector_abort(self, run_scenario):
        """Five identical calls in a row end with `Agent loop aborted by loop detector: …`."""
        responses = [
            {"tool_calls": [call("get_weather", f"c{i}", city="Paris")]} for i in range(5)
        ] + [{"text": "never"}]
        outcome, replay = await run_scenario(
            {"user": "go", "config": AUTO, "tools": [WEATHER], "responses": responses}
        )
        assert TurnOutcomeKind.ABORTED == outcome.kind
        assert outcome.text.startswith("Agent loop aborted by loop detector: ")
        tool_texts = [m["content"] for m in replay.state.messages if m["role"] == "tool"]
        assert tool_texts[2].endswith("Try a different approach.")
        assert "[Loop Detection]" in tool_texts[2]
        assert "[Loop Detection — BLOCKED]" in tool_texts[3]

    async def test_parse_failures_end_with_the_fallback_sentence(self, run_scenario):
        """Three unparseable envelopes (1 + 2 retries) end with the fallback sentence."""
        bad = {"text": "<tool_call>{not json</tool_call>"}
        outcome, replay = await run_scenario(
            {
                "user": "go",
                "tools": [WEATHER],
                "provider": {"native_tools": False},
                "responses": [bad, bad, bad, {"text": "never"}],
            }
        )
        assert PARSE_FAILURE_FINAL == outcome.text
        assert TurnOutcomeKind.ERROR == outcome.kind
        feedback = [m for m in replay.state.messages if m["role"] == "user"][1:]
        assert 2 == len(feedback)
        assert all(m["content"].startswith("[Tool call parse error]") for m in feedback)

    async def test_one_retry_then_success(self, run_scenario):
        """After one parse error the model may answer properly and the turn goes on."""
        outcome, _ = await run_scenario(
            {
                "user": "go",
                "config": AUTO,
                "tools": [WEATHER],
                "provider": {"native_tools": False},
                "responses": [
                    {"text": "<tool_call>{oops</tool_call>"},
                    {"text": PARIS_TAG},
                    {"text": "18C"},
                ],
            }
        )
        assert TurnOutcomeKind.FINAL == outcome.kind


class TestMaxIterations:
    def scenario(self, behavior: str) -> dict:
        responses = [
            {"tool_calls": [call("get_weather", f"c{i}", city=c)]}
            for i, c in enumerate(["Paris", "Oslo"])
        ] + [{"text": "Paris 18C, Oslo 4C so far."}]
        return {
            "user": "go",
            "config": {**AUTO, "max_tool_iterations": 2, "max_iteration_behavior": behavior},
            "tools": [WEATHER],
            "responses": responses,
        }

    async def test_graceful_summary(self, run_scenario):
        """At the cap the model is asked once more without tools and the suffix is appended."""
        outcome, replay = await run_scenario(self.scenario("graceful_summary"))
        expected = (
            "Paris 18C, Oslo 4C so far.\n\n*Turn stopped: reached maximum tool iterations (2).*"
        )
        assert expected == outcome.text
        assert TurnOutcomeKind.MAX_ITERATIONS == outcome.kind
        assert outcome.ok
        assert [] == replay.provider.requests[-1].tools

    async def test_error_at_cap(self, run_scenario):
        """`error_at_cap` fails with `Agent exceeded maximum tool iterations ({N})`."""
        outcome, replay = await run_scenario(self.scenario("error_at_cap"))
        assert "Agent exceeded maximum tool iterations (2)" == outcome.text
        assert not outcome.ok
        assert 1 == replay.provider.remaining


class TestScenarioExhausted:
    async def test_missing_response_is_bad_input(self, run_scenario):
        """A turn that needs more responses than the script has raises a bad-input error."""
        with pytest.raises(ScenarioExhaustedError, match="no response left for provider call 2"):
            await run_scenario(
                {
                    "user": "go",
                    "config": AUTO,
                    "tools": [WEATHER],
                    "responses": [{"tool_calls": [call("get_weather", "c1", city="Paris")]}],
                }
            )


class TestObserverCorrelation:
    async def test_agent_end_reports_outcome(self, run_scenario, observer):
        """The observer sees one AgentEnd with the turn's outcome and iteration count."""
        _, replay = await run_scenario({"user": "hi", "responses": [{"text": "hello"}]})
        (end,) = observer.of(AgentEnd)
        assert (TurnOutcomeKind.FINAL, 1) == (end.outcome, end.iterations)
        assert replay.state.turn_id == end.correlation.turn_id


def test_outcome_enum_is_shared():
    """The slot outcome enum has exactly the nine outcomes of DESIGN §3."""
    expected = {
        "success",
        "error",
        "denied",
        "replaced",
        "deduplicated",
        "cancelled_by_hook",
        "interrupted",
        "unknown",
        "excluded",
    }
    assert expected == {o.value for o in ToolOutcome}


class TestAnswerChunk:
    async def test_final_answer_chunk_is_redacted(self, run_scenario):
        """The final answer's `chunk` TurnEvent goes out redacted, like every streaming event."""
        secret = "ghp_" + "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lm9Nb8"
        outcome, replay = await run_scenario(
            {"user": "hi", "responses": [{"text": f"your token is {secret}"}]}
        )
        (chunk,) = [e for e in replay.events.events if e.type == "chunk"]
        assert "your token is [REDACTED:github_token]" == chunk.data["text"]
        assert f"your token is {secret}" == outcome.text
