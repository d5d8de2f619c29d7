"""Tests for `zeroclaw_obs.turn.hooks`: before/after tool-call hooks (LIFECYCLE §4.1, §7)."""

from __future__ import annotations

import asyncio
from typing import Any

from zeroclaw_obs.observability.events import TurnOutcomeKind
from zeroclaw_obs.tools.base import Tool, ToolResult
from zeroclaw_obs.turn.hooks import CancelCall, Continue, HookCall, Hooks, RewriteCall


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
        empty = (bool(hooks), hooks.has_before, hooks.has_after)
        hooks.add_after(lambda c, r: None)
        assert ((False, False, False), (True, False, True)) == (
            empty,
            (bool(hooks), hooks.has_before, hooks.has_after),
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
