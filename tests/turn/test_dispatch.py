"""Tests for `zeroclaw_obs.turn.dispatch`: the parallel rule and execution (LIFECYCLE §6)."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from zeroclaw_obs.observability.events import ToolCall, ToolCallStart, ToolOutcome
from zeroclaw_obs.tools.base import Tool, ToolResult
from zeroclaw_obs.turn.dispatch import should_run_parallel
from zeroclaw_obs.turn.prep import PreparedCall
from zeroclaw_obs.turn.results import Slot

SLOW = {
    "name": "slow",
    "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
    "responses": [
        {"when": {"n": 1}, "output": "one", "delay_ms": 60},
        {"when": {"n": 2}, "output": "two", "delay_ms": 5},
        {"when": {"n": 9}, "error": "bad"},
        {"default": {"output": "other", "delay_ms": 30}},
    ],
}
FLAKY = {
    "name": "flaky",
    "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
    "responses": [
        {"when": {"n": 1}, "error": "boom"},
        {"when": {"n": 2}, "raise": "kaput"},
        {"when": {"n": 3}, "hang": True},
        {"default": {"output": ""}},
    ],
}
AUTO = ["slow", "flaky", "probe", "tool_search"]
RUNTIME_DENIAL = (
    "Tool call not executed: 'flaky' requires approval and no operator decision was available, "
    "so the runtime denied it by policy. This was not a user's decision."
)


def call(name: str, cid: str, **arguments: object) -> dict:
    return {"id": cid, "name": name, "arguments": arguments}


def scenario(calls: list[dict], *, parallel: bool = True, **config: Any) -> dict:
    config.setdefault("approval", {"auto_approve": AUTO})
    return {
        "user": "go",
        "config": {"parallel_tools": parallel, **config},
        "tools": [SLOW, FLAKY],
        "responses": [{"tool_calls": calls}, {"text": "done"}],
    }


class ProbeTool(Tool):
    """A programmatic tool that records each invocation and how many ran at once."""

    def __init__(self, name: str = "probe", result: Any = None) -> None:
        self.name = name
        self.description = "Sleeps `ms` milliseconds and reports `n`."
        self.result = result
        self.started: list[int] = []
        self.in_flight = 0
        self.max_in_flight = 0

    def parameters_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "ms": {"type": "integer"}},
        }

    async def execute(self, args: dict[str, Any]) -> Any:
        self.started.append(args.get("n", 0))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(args.get("ms", 0) / 1000)
        finally:
            self.in_flight -= 1
        if self.result is not None:
            return self.result
        return ToolResult.ok(f"probe {args.get('n', 0)}")


class NoneTool(ProbeTool):
    """A tool that returns None instead of a ToolResult."""

    def __init__(self) -> None:
        super().__init__("none")

    async def execute(self, args: dict[str, Any]) -> Any:
        return None


class CancellingTool(Tool):
    """A tool whose body raises `CancelledError` although nobody cancelled the turn."""

    name = "cx"
    description = "Raises CancelledError on its own."

    def parameters_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {"n": {"type": "integer"}}}

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        raise asyncio.CancelledError()


def prepared(name: str = "t", *, runnable: bool = True, needs_approval: bool = False):
    slot = Slot(index=0, call_id=f"id-{name}", name=name, arguments={})
    if not runnable:
        slot.fill(ToolOutcome.UNKNOWN, f"Unknown tool: {name}")
        return PreparedCall(slot=slot, needs_approval=needs_approval)
    return PreparedCall(slot=slot, tool=ProbeTool(name), needs_approval=needs_approval)


def tool_messages(replay) -> list[dict]:
    return [m for m in replay.state.messages if m["role"] == "tool"]


def intervals(observer) -> dict[str, tuple[int, int]]:
    return {e.tool_call_id: (e.start_time_ns, e.time_ns) for e in observer.of(ToolCall)}


def open_close_sequence(observer) -> list[tuple[str, str]]:
    kinds = {ToolCallStart: "start", ToolCall: "end"}
    return [
        (kinds[type(e)], e.tool_call_id)
        for e in observer.events
        if type(e) in (ToolCall, ToolCallStart)
    ]


def assert_sequential(observer, ids: list[str]) -> None:
    expected = [(kind, cid) for cid in ids for kind in ("start", "end")]
    assert expected == open_close_sequence(observer)
    spans = [intervals(observer)[cid] for cid in ids]
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end <= start


class TestShouldRunParallel:
    def test_all_conditions_met(self):
        """Two runnable calls, parallel on, nothing prompted, no `tool_search`: parallel."""
        assert should_run_parallel(True, 2, [prepared("a"), prepared("b")])

    def test_parallel_tools_off(self):
        """With `parallel_tools` off the batch runs sequentially."""
        assert not should_run_parallel(False, 2, [prepared("a"), prepared("b")])

    def test_only_one_call_in_the_response(self):
        """A response with one call is never parallel, whatever the prepared list holds."""
        assert not should_run_parallel(True, 1, [prepared("a"), prepared("b")])

    def test_fewer_than_two_survive_preparation(self):
        """Two calls where one did not survive preparation (unknown) run sequentially."""
        assert not should_run_parallel(True, 2, [prepared("a"), prepared("x", runnable=False)])

    def test_two_survivors_out_of_three_is_enough(self):
        """Three calls with one decided in preparation still leave two survivors: parallel."""
        batch = [prepared("a"), prepared("x", runnable=False), prepared("b")]
        assert should_run_parallel(True, 3, batch)

    def test_a_call_that_needed_approval(self):
        """Any call that required a prompt (even if approved) makes the batch sequential."""
        batch = [prepared("a"), prepared("b", needs_approval=True)]
        assert not should_run_parallel(True, 2, batch)

    def test_a_denied_call_that_needed_approval(self):
        """A prompted call that was denied in preparation still makes the batch sequential."""
        batch = [
            prepared("a"),
            prepared("b"),
            prepared("c", runnable=False, needs_approval=True),
        ]
        assert not should_run_parallel(True, 3, batch)

    def test_a_call_named_tool_search(self):
        """A batch containing `tool_search` runs sequentially."""
        assert not should_run_parallel(True, 2, [prepared("a"), prepared("tool_search")])


class TestDispatcher:
    async def test_parallel_batch_overlaps(self, run_scenario, observer):
        """In parallel mode all ToolCallStarts precede the first ToolCall and intervals overlap."""
        calls = [call("slow", "c1", n=1), call("slow", "c2", n=3), call("slow", "c3", n=4)]
        await run_scenario(scenario(calls))
        sequence = open_close_sequence(observer)
        assert [("start", c) for c in ("c1", "c2", "c3")] == sequence[:3]
        spans = intervals(observer).values()
        assert max(start for start, _ in spans) < min(end for _, end in spans)

    async def test_parallel_tools_off_runs_in_order(self, run_scenario, observer):
        """With `parallel_tools` off each call opens and closes before the next one starts."""
        calls = [call("slow", "c1", n=1), call("slow", "c2", n=3)]
        await run_scenario(scenario(calls, parallel=False))
        assert_sequential(observer, ["c1", "c2"])

    async def test_one_survivor_runs_in_model_order(self, run_scenario, observer):
        """When fewer than two calls survive preparation the slots open in the model's order."""
        calls = [call("slow", "c1", n=1), call("nope", "c2"), call("slow", "c3", n=1)]
        _, replay = await run_scenario(scenario(calls))
        assert_sequential(observer, ["c1", "c2", "c3"])
        expected = [
            "one",
            "Unknown tool: nope",
            "Skipped duplicate tool call 'slow' with identical arguments in this turn.",
        ]
        assert expected == [m["content"] for m in tool_messages(replay)]

    async def test_prompted_call_makes_the_batch_sequential(self, run_scenario, observer):
        """A call approved at a prompt (`yes`) still makes the whole batch sequential."""
        calls = [call("slow", "c1", n=1), call("flaky", "c2", n=9), call("slow", "c3", n=3)]
        data = scenario(calls, approval={"auto_approve": ["slow"], "answers": ["yes"]})
        _, replay = await run_scenario(data)
        assert_sequential(observer, ["c1", "c2", "c3"])
        assert "yes" == replay.audit.entries[0].decision

    async def test_tool_search_makes_the_batch_sequential(self, run_scenario, observer):
        """A batch holding a `tool_search` call runs sequentially, in the model's order."""
        data = scenario([call("slow", "c1", n=1), call("tool_search", "c2", query="forecast")])
        data["mcp_servers"] = [
            {
                "name": "wx",
                "deferred": True,
                "tools": [{"name": "forecast", "description": "Weather forecast"}],
            }
        ]
        await run_scenario(data)
        assert_sequential(observer, ["c1", "c2"])

    async def test_history_keeps_model_order_when_a_later_call_finishes_first(
        self, run_scenario, observer
    ):
        """History `tool` messages follow the model's order even when call 2 finishes first."""
        calls = [
            call("slow", "c1", n=1),
            call("slow", "c2", n=2),
            call("flaky", "c3", n=1),
            call("nope", "c4"),
            call("slow", "c5", n=2),
        ]
        _, replay = await run_scenario(scenario(calls))
        finished = [e.tool_call_id for e in observer.of(ToolCall)]
        assert finished.index("c2") < finished.index("c1")
        expected = [
            ("c1", "one"),
            ("c2", "two"),
            ("c3", "Error: boom"),
            ("c4", "Unknown tool: nope"),
            ("c5", "Skipped duplicate tool call 'slow' with identical arguments in this turn."),
        ]
        assert expected == [(m["tool_call_id"], m["content"]) for m in tool_messages(replay)]
        assistant = [m for m in replay.state.messages if m.get("tool_calls")]
        assert ["c1", "c2", "c3", "c4", "c5"] == [c["id"] for c in assistant[0]["tool_calls"]]

    @pytest.mark.parametrize("parallel", [True, False])
    async def test_every_slot_gets_one_card_pair(self, run_scenario, parallel):
        """Every slot, run or not, gets exactly one `tool_call` and one `tool_result` by id."""
        calls = [
            call("slow", "c1", n=2),
            call("flaky", "c2", n=1),
            call("flaky", "c3", n=2),
            call("nope", "c4"),
            call("slow", "c5", n=2),
            call("flaky", "c6", n=4),
        ]
        _, replay = await run_scenario(scenario(calls, parallel=parallel))
        ids = ["c1", "c2", "c3", "c4", "c5", "c6"]
        for kind in ("tool_call", "tool_result"):
            assert ids == sorted(e.id for e in replay.events.events if e.type == kind)
        names = {e.id: e.name for e in replay.events.events if e.type == "tool_call"}
        assert names == {e.id: e.name for e in replay.events.events if e.type == "tool_result"}

    async def test_mixed_outcomes_keep_one_slot_each_in_model_order(self, run_scenario):
        """Success, error, unknown, duplicate, denied and interrupted calls each keep one slot."""
        probe = ProbeTool()
        calls = [
            call("slow", "c1", n=2),
            call("slow", "c2", n=9),
            call("nope", "c3"),
            call("slow", "c4", n=2),
            call("flaky", "c5", n=1),
            call("probe", "c6", n=6, ms=2000),
            call("probe", "c7", n=7),
        ]
        data = scenario(
            calls, approval={"mode": "non_interactive", "auto_approve": ["slow", "probe"]}
        )
        data["cancel_after_ms"] = 40
        _, replay = await run_scenario(data, extra_tools=[probe])
        interrupted = "[interrupted by user before this tool produced a result]"
        expected = [
            ("c1", "two"),
            ("c2", "Error: bad"),
            ("c3", "Unknown tool: nope"),
            ("c4", "Skipped duplicate tool call 'slow' with identical arguments in this turn."),
            ("c5", RUNTIME_DENIAL),
            ("c6", interrupted),
            ("c7", interrupted),
        ]
        assert expected == [(m["tool_call_id"], m["content"]) for m in tool_messages(replay)]
        assert [6] == probe.started
        ids = [cid for cid, _ in expected]
        for kind in ("tool_call", "tool_result"):
            assert ids == [e.id for e in replay.events.events if e.type == kind]

    async def test_tool_returning_a_dict_does_not_crash_the_turn(self, run_scenario):
        """A tool returning a dict instead of a ToolResult becomes a failed slot; the turn ends."""
        probe = ProbeTool(result={"oops": 1})
        outcome, replay = await run_scenario(scenario([call("probe", "c1")]), extra_tools=[probe])
        assert "done" == outcome.text
        expected = "Error executing probe: returned dict, not ToolResult"
        assert expected == tool_messages(replay)[0]["content"]

    @pytest.mark.parametrize("parallel", [True, False])
    async def test_tool_returning_none_does_not_crash_the_turn(self, run_scenario, parallel):
        """A tool returning None is a failed slot while its siblings keep their results."""
        data = scenario([call("none", "c1"), call("good", "c2", n=7)], parallel=parallel)
        data["config"]["approval"] = {"autonomy": "full"}
        outcome, replay = await run_scenario(data, extra_tools=[NoneTool(), ProbeTool("good")])
        assert "done" == outcome.text
        expected = ["Error executing none: returned NoneType, not ToolResult", "probe 7"]
        assert expected == [m["content"] for m in tool_messages(replay)]

    async def test_failed_result_with_output_only(self, run_scenario):
        """`ToolResult(success=False, output="x", error=None)` reads `Error: x`."""
        probe = ProbeTool(result=ToolResult(success=False, output="x", error=None))
        _, replay = await run_scenario(scenario([call("probe", "c1")]), extra_tools=[probe])
        assert "Error: x" == tool_messages(replay)[0]["content"]

    @pytest.mark.parametrize("parallel", [True, False])
    async def test_tool_raising_cancelled_error_is_an_execution_error(self, run_scenario, parallel):
        """A CancelledError the tool raised itself is `Error executing …`, not a turn cancel."""
        data = scenario([call("cx", "c1", n=1), call("cx", "c2", n=2)], parallel=parallel)
        data["config"]["approval"] = {"autonomy": "full"}
        outcome, replay = await run_scenario(data, extra_tools=[CancellingTool()])
        assert "done" == outcome.text
        expected = ["Error executing cx: CancelledError"] * 2
        assert expected == [m["content"] for m in tool_messages(replay)]
        assert 2 == sum(e.type == "tool_result" for e in replay.events.events)

    @pytest.mark.parametrize("parallel", [True, False])
    async def test_hung_tool_times_out(self, run_scenario, observer, parallel):
        """A hung tool becomes `Error: tool timed out after 0.05s` and the turn goes on."""
        calls = [call("flaky", "c1", n=3), call("slow", "c2", n=2)]
        outcome, replay = await run_scenario(
            scenario(calls, parallel=parallel, tool_timeout_s=0.05)
        )
        assert "done" == outcome.text
        expected = ["Error: tool timed out after 0.05s", "two"]
        assert expected == [m["content"] for m in tool_messages(replay)]
        timed_out = next(e for e in observer.of(ToolCall) if e.tool_call_id == "c1")
        assert (ToolOutcome.ERROR, "timeout") == (timed_out.outcome, timed_out.error_type)

    async def test_max_parallel_tools_caps_concurrency(self, run_scenario):
        """`max_parallel_tools: 2` never lets more than two calls of a batch run at once."""
        probe = ProbeTool()
        calls = [call("probe", f"c{n}", n=n, ms=20) for n in range(5)]
        _, replay = await run_scenario(scenario(calls, max_parallel_tools=2), extra_tools=[probe])
        assert 2 == probe.max_in_flight
        assert [f"probe {n}" for n in range(5)] == [m["content"] for m in tool_messages(replay)]

    async def test_without_a_cap_the_whole_batch_runs_at_once(self, run_scenario):
        """Without `max_parallel_tools` all five calls of a parallel batch are in flight at once."""
        probe = ProbeTool()
        calls = [call("probe", f"c{n}", n=n, ms=20) for n in range(5)]
        await run_scenario(scenario(calls), extra_tools=[probe])
        assert 5 == probe.max_in_flight
