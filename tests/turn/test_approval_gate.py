"""Tests for `zeroclaw_obs.turn.approval_gate` and the gate step of preparation (LIFECYCLE §5)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from zeroclaw_obs.approval import (
    ApprovalManager,
    AuditLog,
    Backchannel,
    Decision,
    SurfaceAnswer,
)
from zeroclaw_obs.config import ApprovalConfig
from zeroclaw_obs.observability.events import ApprovalDecision, Correlation, TurnOutcomeKind
from zeroclaw_obs.tools.base import Tool, ToolResult
from zeroclaw_obs.turn.approval_gate import GateVerdict, ask_approval, summarize_arguments
from zeroclaw_obs.turn.context import TurnState

RUNTIME_DENIAL = (
    "Tool call not executed: 'deploy' requires approval and no operator decision was available, "
    "so the runtime denied it by policy. This was not a user's decision."
)
SECRET = "password=hunter2-very-secret"


class RecordingTool(Tool):
    """A programmatic tool that keeps the arguments of every call it receives."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.description = f"{name} (test)"
        self.received: list[dict[str, Any]] = []

    def parameters_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {"target": {"type": "string"}}}

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        self.received.append(dict(args))
        return ToolResult.ok(f"{self.name} ran")


def call(cid: str, name: str = "deploy", **arguments: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "arguments": arguments or {"target": "prod"}}


def scenario(*responses: list[dict[str, Any]], **approval: Any) -> dict[str, Any]:
    return {
        "user": "go",
        "config": {"approval": approval, "receipts": {"enabled": True}},
        "responses": [*({"tool_calls": r} for r in responses), {"text": "done"}],
    }


def tool_texts(replay) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in replay.state.messages if m["role"] == "tool"}


def results(replay) -> dict[str, dict[str, Any]]:
    return {e.id: e.data for e in replay.events.events if e.type == "tool_result"}


def turn_state() -> TurnState:
    state = TurnState(user_message="go", turn_id="t1", iteration=3)
    state.correlation = Correlation(turn_id="t1", channel="cli", agent_alias="a")
    return state


def operator(decision: str, delay_s: float = 0.0, replacement: str | None = None):
    async def answer(request) -> SurfaceAnswer:
        await asyncio.sleep(delay_s)
        return SurfaceAnswer(Decision(decision), "backchannel", "ops:alice", replacement)

    return Backchannel(answer, timeout_s=5)


def manager(backchannel: Backchannel | None, **config: Any) -> ApprovalManager:
    return ApprovalManager(
        ApprovalConfig(mode="backchannel", **config), audit=AuditLog(), backchannel=backchannel
    )


class TestSummarizeArguments:
    def test_sorted_compact_json(self):
        """The summary is the JSON of the arguments with sorted keys, non-ASCII kept."""
        assert '{"a": 1, "b": "é"}' == summarize_arguments({"b": "é", "a": 1})

    def test_long_summary_is_cut(self):
        """A summary longer than 200 characters is cut to 200 with an ellipsis."""
        summary = summarize_arguments({"text": "x" * 500})
        assert (200, "…") == (len(summary), summary[-1])


class TestAskApproval:
    async def test_reports_the_wait(self):
        """The wait for an operator is one `ApprovalDecision` event with its timing and ids."""
        events: list[Any] = []
        verdict = await ask_approval(
            manager(operator("yes", delay_s=0.03)),
            turn_state(),
            tool="deploy",
            call_id="c1",
            redacted_arguments={"target": "prod"},
            emit=events.append,
        )
        (event,) = events
        assert isinstance(event, ApprovalDecision)
        assert ("t1", 3, "c1", "deploy", "yes", "backchannel") == (
            event.correlation.turn_id,
            event.iteration,
            event.tool_call_id,
            event.tool,
            event.decision,
            event.surface,
        )
        assert event.wait_s >= 0.03
        assert event.wait_end_ns - event.wait_start_ns >= 30_000_000
        assert verdict.approved

    @pytest.mark.parametrize(
        ("decision", "approved"), [("yes", True), ("always", True), ("no", False)]
    )
    async def test_verdict_follows_the_decision(self, decision, approved):
        """`yes` and `always` approve; `no` does not."""
        verdict = await ask_approval(
            manager(operator(decision)),
            turn_state(),
            tool="deploy",
            call_id="c1",
            redacted_arguments={},
            emit=lambda e: None,
        )
        assert approved == verdict.approved

    async def test_runtime_denial_is_not_approved(self):
        """With no operator reachable the verdict is a runtime denial, reported as `no`."""
        events: list[Any] = []
        verdict = await ask_approval(
            manager(None),
            turn_state(),
            tool="deploy",
            call_id="c1",
            redacted_arguments={},
            emit=events.append,
        )
        assert (False, True) == (verdict.approved, verdict.outcome.runtime_denied)
        assert RUNTIME_DENIAL == verdict.outcome.slot_text
        assert ("no", "runtime") == (events[0].decision, events[0].surface)

    async def test_audit_entry_carries_the_summary(self):
        """The audit entry has the turn id, the call id and the summary of redacted arguments."""
        approvals = manager(operator("no"))
        await ask_approval(
            approvals,
            turn_state(),
            tool="deploy",
            call_id="c9",
            redacted_arguments={"target": "[REDACTED]"},
            emit=lambda e: None,
        )
        (entry,) = approvals.audit.entries
        assert ("t1", "c9", '{"target": "[REDACTED]"}', "no", "ops:alice") == (
            entry.turn_id,
            entry.tool_call_id,
            entry.arguments_summary,
            entry.decision,
            entry.decided_by,
        )

    def test_verdict_is_frozen(self):
        """A verdict cannot be changed after the gate returned it."""
        verdict = GateVerdict(approved=False, outcome=None)  # type: ignore[arg-type]
        with pytest.raises(AttributeError):
            verdict.approved = True  # type: ignore[misc]


class TestGateInATurn:
    async def test_yes_runs_the_tool(self, run_scenario):
        """An operator's yes lets the call run."""
        tool = RecordingTool("deploy")
        _, replay = await run_scenario(scenario([call("c1")], answers=["yes"]), extra_tools=[tool])
        assert [{"target": "prod"}] == tool.received
        assert "success" == results(replay)["c1"]["outcome"]

    async def test_no_is_denied_by_user(self, run_scenario):
        """An operator's no reads `Denied by user.` and the tool does not run."""
        tool = RecordingTool("deploy")
        _, replay = await run_scenario(scenario([call("c1")], answers=["no"]), extra_tools=[tool])
        assert "Denied by user." == tool_texts(replay)["c1"]
        assert ("denied", False) == (
            results(replay)["c1"]["outcome"],
            results(replay)["c1"]["success"],
        )
        assert [] == tool.received

    async def test_always_allowlists_the_tool(self, run_scenario):
        """After `always`, the tool runs in a later iteration without asking again."""
        tool = RecordingTool("deploy")
        _, replay = await run_scenario(
            scenario([call("c1")], [call("c2", target="staging")], answers=["always"]),
            extra_tools=[tool],
        )
        assert [{"target": "prod"}, {"target": "staging"}] == tool.received
        assert [("c1", "always")] == [(e.tool_call_id, e.decision) for e in replay.audit.entries]

    async def test_replace_with_is_a_sanitised_success(self, run_scenario):
        """A replacement, stripped of control characters, is a successful result with no receipt."""
        tool = RecordingTool("deploy")
        _, replay = await run_scenario(
            scenario([call("c1")], answers=[{"replace_with": "use\x1b[31m staging\x7f\x85\tok\n"}]),
            extra_tools=[tool],
        )
        assert "use[31m staging\tok\n" == tool_texts(replay)["c1"]
        result = results(replay)["c1"]
        assert ("replaced", True, None) == (
            result["outcome"],
            result["success"],
            result.get("receipt"),
        )
        assert [] == tool.received
        assert ["replace"] == [e.decision for e in replay.audit.entries]

    async def test_receipts_still_sign_executed_calls(self, run_scenario):
        """With receipts on, an approved execution does get a receipt (a replacement has none)."""
        _, replay = await run_scenario(
            scenario([call("c1")], answers=["yes"]), extra_tools=[RecordingTool("deploy")]
        )
        assert results(replay)["c1"]["receipt"].startswith("zc-receipt-")

    async def test_non_interactive_runtime_denial(self, run_scenario):
        """A non-interactive turn denies by policy with the exact runtime-denial text."""
        tool = RecordingTool("deploy")
        _, replay = await run_scenario(
            scenario([call("c1")], mode="non_interactive"), extra_tools=[tool]
        )
        assert RUNTIME_DENIAL == tool_texts(replay)["c1"]
        assert "denied" == results(replay)["c1"]["outcome"]
        assert [("runtime", "runtime-policy", "no")] == [
            (e.surface, e.decided_by, e.decision) for e in replay.audit.entries
        ]
        assert [] == tool.received

    async def test_audit_entry_fields(self, run_scenario):
        """Each audit entry names the turn and the call and never holds a secret argument."""
        _, replay = await run_scenario(
            scenario([call("c1", target=f"db {SECRET}")], answers=["no"]),
            extra_tools=[RecordingTool("deploy")],
        )
        (entry,) = replay.audit.entries
        assert (replay.state.turn_id, "c1", "deploy", "scenario") == (
            entry.turn_id,
            entry.tool_call_id,
            entry.tool,
            entry.surface,
        )
        assert "hunter2-very-secret" not in entry.arguments_summary
        assert "db password=" in json.loads(entry.arguments_summary)["target"]
        assert "hunter2-very-secret" not in json.dumps(entry.to_json_dict())

    async def test_decision_event_in_a_turn(self, run_scenario, observer):
        """The observer gets one `ApprovalDecision` per asked call, correlated to the turn."""
        _, replay = await run_scenario(
            scenario([call("c1"), call("c2", target="dev")], answers=["yes", "no"]),
            extra_tools=[RecordingTool("deploy")],
        )
        events = observer.of(ApprovalDecision)
        assert [("c1", "yes"), ("c2", "no")] == [(e.tool_call_id, e.decision) for e in events]
        assert {replay.state.turn_id} == {e.correlation.turn_id for e in events}
        assert all(e.wait_end_ns >= e.wait_start_ns and e.wait_s >= 0 for e in events)

    async def test_auto_approved_calls_are_not_audited(self, run_scenario, observer):
        """An auto-approved call runs without an audit entry or an `ApprovalDecision`."""
        tool = RecordingTool("deploy")
        _, replay = await run_scenario(
            scenario([call("c1")], auto_approve=["deploy"]), extra_tools=[tool]
        )
        assert 1 == len(tool.received)
        assert ([], []) == (replay.audit.entries, observer.of(ApprovalDecision))

    @pytest.mark.parametrize("autonomy", ["full", "read_only"])
    async def test_autonomy_skips_the_prompt(self, run_scenario, autonomy):
        """Autonomy `full` and `read_only` both run the call without asking anyone."""
        tool = RecordingTool("deploy")
        outcome, replay = await run_scenario(
            scenario([call("c1")], autonomy=autonomy, answers=["no"]), extra_tools=[tool]
        )
        assert TurnOutcomeKind.FINAL == outcome.kind
        assert 1 == len(tool.received)
        assert [] == replay.audit.entries

    async def test_prompt_required_batch_runs_sequentially(self, run_scenario):
        """A batch with a prompt-required call runs sequentially even with `parallel_tools`."""
        order: list[str] = []

        class Slow(RecordingTool):
            async def execute(self, args: dict[str, Any]) -> ToolResult:
                order.append(f"start {args['target']}")
                await asyncio.sleep(0.005)
                order.append(f"end {args['target']}")
                return ToolResult.ok("ok")

        data = scenario([call("c1", target="a"), call("c2", target="b")], answers=["yes", "yes"])
        data["config"]["parallel_tools"] = True
        await run_scenario(data, extra_tools=[Slow("deploy")])
        assert ["start a", "end a", "start b", "end b"] == order
