"""Tests for `zeroclaw_obs.turn.hooks`: before/after tool-call hooks (LIFECYCLE §4.1, §7)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from typing import Any

import pytest

from zeroclaw_obs.observability.events import AgentEnd, LlmRequest, TurnOutcomeKind
from zeroclaw_obs.observability.logs.logs import LogObserver, build_logger
from zeroclaw_obs.observability.observer import MultiObserver
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.tools.base import Tool, ToolResult, ToolSpec
from zeroclaw_obs.turn.hooks import (
    CancelCall,
    Continue,
    HookCall,
    HookLlmCall,
    Hooks,
    RewriteCall,
    RewriteLlmCall,
)

from ..builders import SECRET, chained
from ..conftest import RecordingObserver


class RecordingTool(Tool):
    """A programmatic tool that keeps the arguments of every call it receives."""

    def __init__(self, name: str, output: str = "") -> None:
        self.name = name
        self.description = f"{name} (test)"
        self.output = output or f"{name} ran"
        self.received: list[dict[str, Any]] = []

    def parameters_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {"city": {"type": "string"}}}

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        self.received.append(dict(args))
        return ToolResult.ok(self.output)


def hook_call(name: str = "get_weather", **arguments: Any) -> HookCall:
    return HookCall(name=name, arguments=arguments, call_id="c1", turn_id="t1")


def scenario(*tool_calls: dict[str, Any], **approval: Any) -> dict[str, Any]:
    return {
        "user": "go",
        "config": {"approval": approval or {"auto_approve": ["*"]}},
        "responses": [{"tool_calls": list(tool_calls)}, {"text": "done"}],
    }


def call(name: str, cid: str, **arguments: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "arguments": arguments}


def tool_texts(replay) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in replay.state.messages if m["role"] == "tool"}


def outcomes(replay) -> dict[str, str]:
    return {e.id: e.data["outcome"] for e in replay.events.events if e.type == "tool_result"}


class TestHooks:
    async def test_descending_priority(self):
        """Before-hooks run from the highest priority to the lowest, whatever the registration."""
        order: list[int] = []
        hooks = Hooks()
        for priority in (0, 10, -5, 3):
            hooks.add_before(lambda c, p=priority: order.append(p), priority=priority)
        await hooks.run_before(hook_call())
        assert [10, 3, 0, -5] == order

    async def test_equal_priority_keeps_registration_order(self):
        """Hooks of equal priority run in the order they were registered."""
        order: list[str] = []
        hooks = Hooks()
        for label in ("first", "second", "third"):
            hooks.add_before(lambda c, label=label: order.append(label), priority=1)
        hooks.add_before(lambda c: order.append("high"), priority=2)
        await hooks.run_before(hook_call())
        assert ["high", "first", "second", "third"] == order

    async def test_after_hooks_follow_priority_too(self):
        """After-hooks run by descending priority, equal priorities in registration order."""
        order: list[str] = []
        hooks = Hooks()
        hooks.add_after(lambda c, r: order.append("a0"))
        hooks.add_after(lambda c, r: order.append("b5"), priority=5)
        hooks.add_after(lambda c, r: order.append("c0"))
        await hooks.run_after(hook_call(), ToolResult.ok("x"))
        assert ["b5", "a0", "c0"] == order

    def test_truthiness_and_flags(self):
        """A hook set is truthy once any hook is registered; each kind is reported apart."""
        hooks = Hooks()
        empty = (bool(hooks), hooks.has_before, hooks.has_after, hooks.has_before_llm)
        hooks.add_after(lambda c, r: None)
        after = (bool(hooks), hooks.has_before, hooks.has_after, hooks.has_before_llm)
        llm_only = Hooks()
        llm_only.add_before_llm(lambda c: None)
        assert (
            (False, False, False, False),
            (True, False, True, False),
            (True, False, False, True),
        ) == (
            empty,
            after,
            (bool(llm_only), llm_only.has_before, llm_only.has_after, llm_only.has_before_llm),
        )


class TestRunBefore:
    async def test_continue_and_none_leave_the_call_unchanged(self):
        """`Continue()` and `None` let the call go on as it was."""
        hooks = Hooks()
        hooks.add_before(lambda c: Continue())
        hooks.add_before(lambda c: None)
        result = await hooks.run_before(hook_call(city="Paris"))
        assert hook_call(city="Paris") == result

    async def test_cancel_stops_the_chain(self):
        """A cancelling hook returns its reason and later hooks do not run."""
        later: list[HookCall] = []
        hooks = Hooks()
        hooks.add_before(lambda c: CancelCall("policy says no"), priority=1)
        hooks.add_before(later.append)
        assert CancelCall("policy says no") == await hooks.run_before(hook_call())
        assert [] == later

    async def test_rewrite_is_seen_by_later_hooks(self):
        """A rewrite replaces name and arguments for every later hook and for the caller."""
        seen: list[HookCall] = []
        hooks = Hooks()
        hooks.add_before(
            lambda c: RewriteCall(name="get_forecast", arguments={"city": "Oslo"}), priority=1
        )
        hooks.add_before(seen.append)
        result = await hooks.run_before(hook_call(city="Paris"))
        expected = HookCall(
            name="get_forecast", arguments={"city": "Oslo"}, call_id="c1", turn_id="t1"
        )
        assert [expected] == seen
        assert expected == result

    async def test_rewrite_of_arguments_only_keeps_the_name(self):
        """A rewrite that gives only arguments keeps the current name."""
        hooks = Hooks()
        hooks.add_before(lambda c: RewriteCall(arguments={"city": "Oslo"}))
        result = await hooks.run_before(hook_call(city="Paris"))
        assert ("get_weather", {"city": "Oslo"}) == (result.name, result.arguments)

    async def test_async_hook_is_awaited(self):
        """An async before-hook is awaited and its decision applies."""

        async def rewrite(c: HookCall) -> RewriteCall:
            await asyncio.sleep(0)
            return RewriteCall(arguments={"city": c.arguments["city"].upper()})

        hooks = Hooks()
        hooks.add_before(rewrite)
        result = await hooks.run_before(hook_call(city="paris"))
        assert {"city": "PARIS"} == result.arguments

    async def test_raising_hook_cancels(self):
        """A before-hook that raises cancels the call (fail closed), naming the hook and error."""

        def broken_policy(c: HookCall) -> None:
            raise RuntimeError("secret detail")

        hooks = Hooks()
        hooks.add_before(broken_policy)
        result = await hooks.run_before(hook_call())
        assert isinstance(result, CancelCall)
        assert "broken_policy" in result.reason and "RuntimeError" in result.reason
        assert "secret detail" not in result.reason

    async def test_cancel_in_a_turn(self, run_scenario):
        """A cancelled call reads `Cancelled by hook: {reason}` and never runs."""
        tool = RecordingTool("get_weather")
        hooks = Hooks()
        hooks.add_before(lambda c: CancelCall("no weather today"))
        _, replay = await run_scenario(
            scenario(call("get_weather", "c1", city="Paris")), hooks=hooks, extra_tools=[tool]
        )
        assert "Cancelled by hook: no weather today" == tool_texts(replay)["c1"]
        assert {"c1": "cancelled_by_hook"} == outcomes(replay)
        assert [] == tool.received

    async def test_cancelled_call_is_never_asked(self, run_scenario):
        """A hook-cancelled call reaches no approver: its answer is left for the next call."""
        tool = RecordingTool("get_weather")
        hooks = Hooks()
        hooks.add_before(lambda c: CancelCall("x") if c.call_id == "c1" else None)
        _, replay = await run_scenario(
            scenario(
                call("get_weather", "c1", city="Paris"),
                call("get_weather", "c2", city="Oslo"),
                answers=["yes"],
            ),
            hooks=hooks,
            extra_tools=[tool],
        )
        assert ["c2"] == [e.tool_call_id for e in replay.audit.entries]
        assert [{"city": "Oslo"}] == tool.received

    async def test_raising_hook_cancels_in_a_turn(self, run_scenario):
        """A crashed policy hook does not let the call through."""
        tool = RecordingTool("get_weather")
        hooks = Hooks()
        hooks.add_before(lambda c: 1 / 0)
        outcome, replay = await run_scenario(
            scenario(call("get_weather", "c1", city="Paris")), hooks=hooks, extra_tools=[tool]
        )
        assert TurnOutcomeKind.FINAL == outcome.kind
        assert tool_texts(replay)["c1"].startswith("Cancelled by hook: ")
        assert {"c1": "cancelled_by_hook"} == outcomes(replay)
        assert [] == tool.received

    async def test_rewrite_to_another_tool_runs_that_tool(self, run_scenario):
        """A name rewrite applies to the rest of the pipeline: the other tool runs."""
        weather = RecordingTool("get_weather")
        forecast = RecordingTool("get_forecast", output="rain")
        hooks = Hooks()
        hooks.add_before(lambda c: RewriteCall(name="get_forecast"))
        _, replay = await run_scenario(
            scenario(call("get_weather", "c1", city="Paris")),
            hooks=hooks,
            extra_tools=[weather, forecast],
        )
        assert ([], [{"city": "Paris"}]) == (weather.received, forecast.received)
        assert "rain" == tool_texts(replay)["c1"]

    async def test_rewritten_name_is_what_the_approver_sees(self, run_scenario):
        """The approval gate judges the rewritten tool, not the one the model called."""
        weather = RecordingTool("get_weather")
        forecast = RecordingTool("get_forecast")
        hooks = Hooks()
        hooks.add_before(lambda c: RewriteCall(name="get_forecast"))
        _, replay = await run_scenario(
            scenario(call("get_weather", "c1", city="Paris"), answers=["yes"]),
            hooks=hooks,
            extra_tools=[weather, forecast],
        )
        assert ["get_forecast"] == [e.tool for e in replay.audit.entries]

    async def test_rewrite_of_arguments_reaches_the_tool(self, run_scenario):
        """An argument rewrite is what the tool receives."""
        tool = RecordingTool("get_weather")
        hooks = Hooks()
        hooks.add_before(lambda c: RewriteCall(arguments={"city": "Oslo"}))
        await run_scenario(
            scenario(call("get_weather", "c1", city="Paris")), hooks=hooks, extra_tools=[tool]
        )
        assert [{"city": "Oslo"}] == tool.received

    async def test_rewrite_to_an_unknown_tool(self, run_scenario):
        """A rewrite to a name that is no tool reads `Unknown tool: {name}`."""
        hooks = Hooks()
        hooks.add_before(lambda c: RewriteCall(name="nowhere"))
        _, replay = await run_scenario(
            scenario(call("get_weather", "c1", city="Paris")),
            hooks=hooks,
            extra_tools=[RecordingTool("get_weather")],
        )
        assert "Unknown tool: nowhere" == tool_texts(replay)["c1"]


class TestRunAfter:
    async def test_raising_hook_does_not_stop_the_others(self):
        """An after-hook that raises is logged and the next after-hook still runs."""
        ran: list[str] = []
        hooks = Hooks()
        hooks.add_after(lambda c, r: 1 / 0, priority=1)
        hooks.add_after(lambda c, r: ran.append(r.output))
        await hooks.run_after(hook_call(), ToolResult.ok("fine"))
        assert ["fine"] == ran

    async def test_async_after_hook_is_awaited(self):
        """An async after-hook is awaited."""
        ran: list[str] = []

        async def after(c: HookCall, r: ToolResult) -> None:
            await asyncio.sleep(0)
            ran.append(c.name)

        hooks = Hooks()
        hooks.add_after(after)
        await hooks.run_after(hook_call(), ToolResult.ok("x"))
        assert ["get_weather"] == ran

    async def test_runs_for_executed_calls_only(self, run_scenario):
        """After-hooks see executed calls, never denied, unknown or duplicate ones."""
        seen: list[tuple[str, str, dict[str, Any]]] = []
        hooks = Hooks()
        hooks.add_after(lambda c, r: seen.append((c.call_id, r.output, c.arguments)))
        await run_scenario(
            scenario(
                call("get_weather", "c1", city="Paris"),
                call("nope", "c2"),
                call("get_weather", "c3", city="Paris"),
                call("shell", "c4"),
                auto_approve=["get_weather"],
            ),
            hooks=hooks,
            extra_tools=[RecordingTool("get_weather", output="18C"), RecordingTool("shell")],
        )
        assert [("c1", "18C", {"city": "Paris"})] == seen

    async def test_raising_hook_does_not_break_the_turn(self, run_scenario):
        """A raising after-hook leaves the result and the turn as they were."""
        hooks = Hooks()
        hooks.add_after(lambda c, r: 1 / 0)
        outcome, replay = await run_scenario(
            scenario(call("get_weather", "c1", city="Paris")),
            hooks=hooks,
            extra_tools=[RecordingTool("get_weather", output="18C")],
        )
        assert TurnOutcomeKind.FINAL == outcome.kind
        assert {"c1": "18C"} == tool_texts(replay)
        assert {"c1": "success"} == outcomes(replay)


# --- before_llm_call ----------------------------------------------------------------------------

GREET = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
SPEC = ToolSpec(name="get_weather", description="Weather.", parameters={"type": "object"})


def llm_call(**overrides: Any) -> HookLlmCall:
    fields: dict[str, Any] = {
        "messages": [dict(m) for m in GREET],
        "tools": [SPEC],
        "model": "gpt-test",
        "iteration": 1,
        "turn_id": "t1",
    }
    return HookLlmCall(**{**fields, **overrides})


def two_calls(**config: Any) -> dict[str, Any]:
    """A turn with two provider calls: a tool round, then the answer."""
    return {
        "user": "weather?",
        "config": {"approval": {"auto_approve": ["*"]}, **config},
        "responses": [
            {"tool_calls": [call("get_weather", "c1", city="Paris")]},
            {"text": "18C"},
        ],
    }


class TestRunBeforeLlm:
    async def test_descending_priority_then_registration_order(self):
        """`before_llm_call` hooks run from the highest priority down; ties keep their order."""
        order: list[str] = []
        hooks = Hooks()
        for name, priority in (("a", 0), ("b", 5), ("c", 0), ("d", 9), ("e", 5)):
            hooks.add_before_llm(lambda c, n=name: order.append(n), priority=priority)
        await hooks.run_before_llm(llm_call())
        assert ["d", "b", "e", "a", "c"] == order

    async def test_continue_and_none_leave_the_request_unchanged(self):
        """`Continue()` and `None` let the request go as it was."""
        hooks = Hooks()
        hooks.add_before_llm(lambda c: Continue())
        hooks.add_before_llm(lambda c: None)
        assert llm_call() == await hooks.run_before_llm(llm_call())

    async def test_each_hook_gets_its_own_copy(self):
        """Mutating the messages a hook sees changes neither the request nor the next hook's."""
        seen: list[list[dict[str, Any]]] = []

        def vandal(c: HookLlmCall) -> None:
            c.messages[1]["content"] = "changed"
            c.messages.append({"role": "user", "content": "more"})
            c.tools.clear()

        hooks = Hooks()
        hooks.add_before_llm(vandal, priority=1)
        hooks.add_before_llm(lambda c: seen.append(c.messages))
        request = llm_call()
        result = await hooks.run_before_llm(request)
        assert (GREET, [GREET]) == (result.messages, seen)
        assert [SPEC] == result.tools

    async def test_cancel_stops_the_chain(self):
        """A cancelling hook returns its reason and later hooks do not run."""
        later: list[HookLlmCall] = []
        hooks = Hooks()
        hooks.add_before_llm(lambda c: CancelCall("over budget"), priority=1)
        hooks.add_before_llm(later.append)
        assert CancelCall("over budget") == await hooks.run_before_llm(llm_call())
        assert [] == later

    async def test_rewrite_is_seen_by_later_hooks(self):
        """A rewrite of the messages keeps the tools, and later hooks see the rewrite."""
        seen: list[HookLlmCall] = []
        short = [{"role": "user", "content": "hi"}]
        hooks = Hooks()
        hooks.add_before_llm(lambda c: RewriteLlmCall(messages=short), priority=1)
        hooks.add_before_llm(seen.append)
        result = await hooks.run_before_llm(llm_call())
        assert (short, [SPEC]) == (result.messages, result.tools)
        assert [short] == [c.messages for c in seen]

    async def test_async_hook_is_awaited(self):
        """An async hook is awaited and its decision applies."""

        async def no_tools(c: HookLlmCall) -> RewriteLlmCall:
            await asyncio.sleep(0)
            return RewriteLlmCall(tools=[])

        hooks = Hooks()
        hooks.add_before_llm(no_tools)
        assert [] == (await hooks.run_before_llm(llm_call())).tools

    async def test_raising_hook_cancels_and_is_logged_by_type(self, caplog):
        """A hook that raises cancels the request (fail closed); the log names its type only."""

        def broken_budget(c: HookLlmCall) -> None:
            raise RuntimeError(f"secret detail {SECRET}")

        hooks = Hooks()
        hooks.add_before_llm(broken_budget)
        with caplog.at_level(logging.WARNING, logger="zeroclaw_obs.turn.hooks"):
            result = await hooks.run_before_llm(llm_call())
        assert isinstance(result, CancelCall)
        assert result.reason.endswith("broken_budget failed (RuntimeError)")
        assert "RuntimeError" in caplog.text
        assert "secret detail" not in caplog.text + result.reason

    @pytest.mark.parametrize(
        "rewrite",
        [
            RewriteLlmCall(messages="hi"),  # type: ignore[arg-type]
            RewriteLlmCall(messages=[{"content": "no role"}]),
            RewriteLlmCall(tools=[{"name": "x"}]),  # type: ignore[list-item]
        ],
    )
    async def test_a_malformed_rewrite_cancels(self, rewrite):
        """A rewrite that is not a list of messages / tool specs cancels the request."""
        hooks = Hooks()
        hooks.add_before_llm(lambda c: rewrite)
        result = await hooks.run_before_llm(llm_call())
        assert isinstance(result, CancelCall)
        assert result.reason.endswith("returned an invalid rewrite")


class TestBeforeLlmCallInATurn:
    async def test_cancel_ends_the_turn_as_aborted_before_any_request(self, run_scenario):
        """A cancel ends the turn `aborted` with `LLM call cancelled by hook: {reason}`; the
        provider is never asked and the history keeps only the user's message."""
        hooks = Hooks()
        hooks.add_before_llm(lambda c: CancelCall("token budget spent"))
        observer = RecordingObserver()
        outcome, replay = await run_scenario(two_calls(), hooks=hooks, observer=observer)
        text = "LLM call cancelled by hook: token budget spent"
        assert (TurnOutcomeKind.ABORTED, text, text) == (outcome.kind, outcome.text, outcome.error)
        assert [] == replay.provider.requests
        assert [] == observer.of(LlmRequest)
        assert ["user"] == [m["role"] for m in replay.state.messages if m["role"] != "system"]
        chunks = [e.data["text"] for e in replay.events.events if e.type == "chunk"]
        assert [text] == chunks

    async def test_a_later_call_can_be_cancelled(self, run_scenario):
        """Hooks run before every provider call: cancelling the second keeps the tool round."""
        hooks = Hooks()
        hooks.add_before_llm(lambda c: CancelCall("one is enough") if c.iteration == 2 else None)
        outcome, replay = await run_scenario(
            two_calls(), hooks=hooks, extra_tools=[RecordingTool("get_weather", "18C")]
        )
        assert (TurnOutcomeKind.ABORTED, 1) == (outcome.kind, len(replay.provider.requests))
        assert {"c1": "18C"} == tool_texts(replay)

    async def test_the_reason_is_redacted_everywhere_it_shows(self, run_scenario, traced):
        """The reason is user text: chunks, the turn's end event, spans and logs show it
        redacted; only the returned outcome keeps it for the API caller."""
        hooks = Hooks()
        hooks.add_before_llm(lambda c: CancelCall(f"leaked {SECRET}"))
        stream = io.StringIO()
        events = RecordingObserver()
        logs = LogObserver(build_logger(redactor=Redactor(), stream=stream))
        observer = MultiObserver([chained(traced.observer, logs), events])
        outcome, replay = await run_scenario(two_calls(), hooks=hooks, observer=observer)
        assert SECRET in outcome.text
        shown = "LLM call cancelled by hook: leaked [REDACTED:github_token]"
        (end,) = events.of(AgentEnd)
        root = traced.root()
        chunks = [e.data["text"] for e in replay.events.events if e.type == "chunk"]
        (line,) = [json.loads(x) for x in stream.getvalue().splitlines() if "turn_end" in x]
        assert [shown] * 5 == [
            end.error,
            end.output,
            root.status.description,
            chunks[0],
            line["error"],
        ]
        assert ("aborted", "aborted") == (
            root.attributes["zeroclaw.turn.outcome"],
            root.attributes["error.type"],
        )
        spans = json.dumps([dict(s.attributes) for s in traced.spans])
        assert SECRET not in spans + stream.getvalue()

    async def test_a_raising_hook_aborts_the_turn(self, run_scenario):
        """A hook that raises cancels the request: the turn ends aborted, naming its type."""
        hooks = Hooks()
        hooks.add_before_llm(lambda c: 1 / 0)
        outcome, replay = await run_scenario(two_calls(), hooks=hooks)
        assert TurnOutcomeKind.ABORTED == outcome.kind
        assert outcome.text.startswith("LLM call cancelled by hook: hook ")
        assert outcome.text.endswith(" failed (ZeroDivisionError)")
        assert [] == replay.provider.requests

    async def test_a_rewrite_changes_what_is_sent_not_the_history(self, run_scenario):
        """Rewritten messages and tools are what the provider receives and the request event
        counts; the history keeps the turn as it happened."""
        seen: list[HookLlmCall] = []
        only = [{"role": "user", "content": "weather? (rewritten)"}]

        def rewrite(c: HookLlmCall) -> RewriteLlmCall:
            seen.append(c)
            return RewriteLlmCall(messages=only, tools=[])

        hooks = Hooks()
        hooks.add_before_llm(rewrite)
        observer = RecordingObserver()
        outcome, replay = await run_scenario(
            two_calls(),
            hooks=hooks,
            observer=observer,
            extra_tools=[RecordingTool("get_weather", "18C")],
        )
        assert TurnOutcomeKind.FINAL == outcome.kind
        assert [(only, [])] * 2 == [(r.messages, r.tools) for r in replay.provider.requests]
        assert [1, 1] == [e.message_count for e in observer.of(LlmRequest)]
        assert ["weather?"] == [m["content"] for m in replay.state.messages if m["role"] == "user"]
        assert ("scripted-model", [1, 2]) == (seen[0].model, [c.iteration for c in seen])
        assert (["get_weather"], replay.state.turn_id) == (
            [t.name for t in seen[0].tools],
            seen[0].turn_id,
        )
        assert "tool" == seen[1].messages[-1]["role"]  # the tool round is in the second view
