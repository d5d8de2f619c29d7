"""Turn cancellation during dispatch, in both modes, and foreign cancellations (§6)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.conftest import make_replay
from zeroclaw_obs.observability.events import AgentEnd, ToolCall, ToolOutcome, TurnOutcomeKind
from zeroclaw_obs.tools.base import Tool, ToolResult

INTERRUPTED = "[interrupted by user before this tool produced a result]"


class ProbeTool(Tool):
    """Sleeps `ms` milliseconds; records which calls started and which finished."""

    name = "probe"
    description = "Sleeps `ms` milliseconds and reports `n`."

    def __init__(self) -> None:
        self.started: list[int] = []
        self.finished: list[int] = []

    def parameters_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "ms": {"type": "integer"}},
        }

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        self.started.append(args["n"])
        await asyncio.sleep(args.get("ms", 0) / 1000)
        self.finished.append(args["n"])
        return ToolResult.ok(f"probe {args['n']}")


def probe(cid: str, n: int, ms: int = 0) -> dict:
    return {"id": cid, "name": "probe", "arguments": {"n": n, "ms": ms}}


def scenario(calls: list[dict], *, parallel: bool, cancel_after_ms: float | None = 40, **config):
    return {
        "user": "go",
        "config": {"parallel_tools": parallel, "approval": {"auto_approve": ["probe"]}, **config},
        "responses": [{"tool_calls": calls}, {"text": "never"}],
        "cancel_after_ms": cancel_after_ms,
    }


def tool_messages(replay) -> list[str]:
    return [m["content"] for m in replay.state.messages if m["role"] == "tool"]


def cards(replay, kind: str) -> list[str]:
    return sorted(e.id for e in replay.events.events if e.type == kind)


class TestParallelCancellation:
    async def test_finished_sibling_keeps_its_result(self, run_scenario):
        """Finished siblings keep their result; unfinished ones read
        `[interrupted by user before this tool produced a result]`."""
        tool = ProbeTool()
        calls = [probe("c1", 1, 2000), probe("c2", 2), probe("c3", 3, 2000)]
        outcome, replay = await run_scenario(scenario(calls, parallel=True), extra_tools=[tool])
        assert TurnOutcomeKind.CANCELLED == outcome.kind
        assert [INTERRUPTED, "probe 2", INTERRUPTED] == tool_messages(replay)
        assert [2] == tool.finished

    async def test_every_pending_card_is_closed(self, run_scenario):
        """Every `tool_call` card gets exactly one `tool_result`, interrupted ones included."""
        calls = [probe("c1", 1, 2000), probe("c2", 2), probe("c3", 3, 2000)]
        _, replay = await run_scenario(scenario(calls, parallel=True), extra_tools=[ProbeTool()])
        assert ["c1", "c2", "c3"] == cards(replay, "tool_call")
        assert ["c1", "c2", "c3"] == cards(replay, "tool_result")
        outcomes = {
            e.id: e.data["outcome"] for e in replay.events.events if e.type == "tool_result"
        }
        assert {"c1": "interrupted", "c2": "success", "c3": "interrupted"} == outcomes

    async def test_round_is_written_to_history(self, run_scenario, observer):
        """The cancelled round is in history, no further provider call is made, the turn ends."""
        calls = [probe("c1", 1, 2000), probe("c2", 2)]
        _, replay = await run_scenario(scenario(calls, parallel=True), extra_tools=[ProbeTool()])
        assistant = replay.state.messages[-3]
        assert ["c1", "c2"] == [c["id"] for c in assistant["tool_calls"]]
        assert ["c1", "c2"] == [m["tool_call_id"] for m in replay.state.messages[-2:]]
        assert 1 == replay.provider.remaining
        assert [TurnOutcomeKind.CANCELLED] == [e.outcome for e in observer.of(AgentEnd)]

    async def test_queued_calls_never_start(self, run_scenario, observer):
        """With `max_parallel_tools: 1` calls still queued at the cancel never run."""
        tool = ProbeTool()
        calls = [probe("c1", 1, 2000), probe("c2", 2, 2000), probe("c3", 3, 2000)]
        data = scenario(calls, parallel=True, max_parallel_tools=1)
        _, replay = await run_scenario(data, extra_tools=[tool])
        assert [1] == tool.started
        assert [INTERRUPTED] * 3 == tool_messages(replay)
        assert [ToolOutcome.INTERRUPTED] * 3 == [e.outcome for e in observer.of(ToolCall)]

    async def test_slots_decided_in_preparation_keep_their_text(self, run_scenario):
        """An unknown call in a cancelled parallel batch still reads `Unknown tool: …`."""
        calls = [probe("c1", 1, 2000), {"id": "c2", "name": "nope"}, probe("c3", 3, 2000)]
        _, replay = await run_scenario(scenario(calls, parallel=True), extra_tools=[ProbeTool()])
        assert [INTERRUPTED, "Unknown tool: nope", INTERRUPTED] == tool_messages(replay)


class TestSequentialCancellation:
    async def test_cancel_during_the_first_call_skips_the_rest(self, run_scenario):
        """Cancelled during call 1 of 3: all three are interrupted and calls 2-3 never start."""
        tool = ProbeTool()
        calls = [probe("c1", 1, 2000), probe("c2", 2), probe("c3", 3)]
        outcome, replay = await run_scenario(scenario(calls, parallel=False), extra_tools=[tool])
        assert TurnOutcomeKind.CANCELLED == outcome.kind
        assert [1] == tool.started
        assert [INTERRUPTED] * 3 == tool_messages(replay)
        assert ["c1", "c2", "c3"] == cards(replay, "tool_result")

    async def test_finished_calls_keep_their_results(self, run_scenario):
        """Cancelled during call 2: call 1 keeps its result, calls 2-3 are interrupted."""
        tool = ProbeTool()
        calls = [probe("c1", 1), probe("c2", 2, 2000), probe("c3", 3)]
        _, replay = await run_scenario(scenario(calls, parallel=False), extra_tools=[tool])
        assert [1, 2] == tool.started
        assert ["probe 1", INTERRUPTED, INTERRUPTED] == tool_messages(replay)

    async def test_slots_decided_in_preparation_keep_their_text(self, run_scenario):
        """A duplicate after the interrupted call keeps its duplicate text."""
        calls = [probe("c1", 1, 2000), probe("c2", 1, 2000), probe("c3", 3)]
        _, replay = await run_scenario(scenario(calls, parallel=False), extra_tools=[ProbeTool()])
        duplicate = "Skipped duplicate tool call 'probe' with identical arguments in this turn."
        assert [INTERRUPTED, duplicate, INTERRUPTED] == tool_messages(replay)

    async def test_cancel_between_calls_stops_dispatching(self, run_scenario):
        """A cancel requested while no call is awaiting still stops the next call from starting."""

        class StopTool(ProbeTool):
            name = "stop"

            async def execute(self, args: dict[str, Any]) -> ToolResult:
                replay.state.cancellation.cancel()
                return ToolResult.ok("stopping")

        tool = ProbeTool()
        calls = [{"id": "c1", "name": "stop", "arguments": {}}, probe("c2", 2), probe("c3", 3)]
        data = scenario(calls, parallel=False, cancel_after_ms=None)
        data["config"]["approval"]["auto_approve"].append("stop")
        replay = make_replay(data, extra_tools=[StopTool(), tool])
        outcome = await replay.run()
        assert TurnOutcomeKind.CANCELLED == outcome.kind
        assert [] == tool.started
        assert ["stopping", INTERRUPTED, INTERRUPTED] == tool_messages(replay)

    async def test_history_and_outcome(self, run_scenario, observer):
        """The interrupted round is written to history and the turn ends cancelled."""
        calls = [probe("c1", 1, 2000), probe("c2", 2)]
        _, replay = await run_scenario(scenario(calls, parallel=False), extra_tools=[ProbeTool()])
        assert ["c1", "c2"] == [m["tool_call_id"] for m in replay.state.messages[-2:]]
        assert 1 == replay.provider.remaining
        assert [TurnOutcomeKind.CANCELLED] == [e.outcome for e in observer.of(AgentEnd)]


class TestForeignCancellation:
    @pytest.mark.parametrize("parallel", [True, False])
    async def test_outer_cancel_propagates(self, observer, parallel):
        """A CancelledError the turn's scope did not request propagates, not swallowed."""
        tool = ProbeTool()
        calls = [probe("c1", 1, 2000), probe("c2", 2, 2000)]
        replay = make_replay(
            scenario(calls, parallel=parallel, cancel_after_ms=None),
            observer=observer,
            extra_tools=[tool],
        )
        task = asyncio.create_task(replay.run())
        while not tool.started and not task.done():
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not replay.state.cancellation.requested
        assert [] == observer.of(AgentEnd)


class HangingTerminal:
    """An operator who never answers."""

    def is_available(self) -> bool:
        return True

    async def ask(self, request):
        await asyncio.Event().wait()


class TestCancelDuringPreparation:
    async def test_decided_slots_keep_their_outcome(self, run_scenario):
        """Cancelled while waiting for approval: earlier decided calls keep their slot text,
        the waiting and later calls are interrupted, and every card is closed."""
        shell = {
            "name": "shell",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
            "responses": [{"default": {"output": "ran"}}],
        }
        outcome, replay = await run_scenario(
            {
                "user": "go",
                "tools": [shell],
                "responses": [
                    {
                        "tool_calls": [
                            {"id": "u", "name": "nope", "arguments": {}},
                            {"id": "s", "name": "shell", "arguments": {"command": "ls"}},
                            {"id": "t", "name": "shell", "arguments": {"command": "pwd"}},
                        ]
                    },
                    {"text": "never"},
                ],
                "cancel_after_ms": 30,
            },
            terminal=HangingTerminal(),
        )
        assert "cancelled" == outcome.kind.value
        tool_messages = [m["content"] for m in replay.state.messages if m["role"] == "tool"]
        interrupted = "[interrupted by user before this tool produced a result]"
        assert ["Unknown tool: nope", interrupted, interrupted] == tool_messages
        events = replay.events.events
        assert ["u", "s", "t"] == [e.id for e in events if e.type == "tool_call"]
        assert ["u", "s", "t"] == [e.id for e in events if e.type == "tool_result"]
        assert [] == replay.audit.entries
