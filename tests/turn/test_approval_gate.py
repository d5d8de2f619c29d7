"""Tests for `zeroclaw_obs.turn.approval_gate` and the gate step of preparation (LIFECYCLE §5)."""

from __future__ import annotations

import asyncio
import io
import json
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zeroclaw_obs.approval import (
    REST_DISPLAY_LIMIT,
    ApprovalManager,
    AuditLog,
    Backchannel,
    Decision,
    SurfaceAnswer,
    TerminalPrompter,
)
from zeroclaw_obs.config import ApprovalConfig
from zeroclaw_obs.observability.events import ApprovalDecision, Correlation, TurnOutcomeKind
from zeroclaw_obs.redaction import Redactor
from zeroclaw_obs.tools.base import Tool, ToolResult
from zeroclaw_obs.turn.approval_gate import (
    PRIMARY_ARGUMENTS,
    GateVerdict,
    ask_approval,
    primary_arguments,
    shown_annotations,
    summarize_arguments,
)
from zeroclaw_obs.turn.context import TurnState

RUNTIME_DENIAL = (
    "Tool call not executed: 'deploy' requires approval and no operator decision was available, "
    "so the runtime denied it by policy. This was not a user's decision."
)
SECRET = "password=hunter2-very-secret"
GITHUB_TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
LONG_KEY = "a" * 500


class RecordingTool(Tool):
    """A programmatic tool that keeps the arguments of every call it receives."""

    def __init__(self, name: str, properties: tuple[str, ...] = ("target",)) -> None:
        self.name = name
        self.description = f"{name} (test)"
        self.properties = properties
        self.received: list[dict[str, Any]] = []

    def parameters_schema(self) -> dict[str, Any]:
        return {"type": "object", "properties": {p: {"type": "string"} for p in self.properties}}

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


class FakeTty(io.StringIO):
    """A terminal stand-in: reads scripted lines and claims to be a TTY."""

    def isatty(self) -> bool:
        return True


class SlowTty(FakeTty):
    """A terminal whose operator takes `WAIT_S` to answer yes."""

    def readline(self, size: int | None = -1) -> str:
        time.sleep(WAIT_S)
        return "y\n"


WAIT_S = 0.05


def shell_call(cid: str, command: str) -> dict[str, Any]:
    return {"id": cid, "name": "shell", "arguments": {LONG_KEY: "x", "command": command}}


class TestPrimaryArguments:
    def test_shell_is_decided_by_its_command(self):
        """`shell` is decided by `command`, whatever its schema says."""
        schema = {"required": ["cwd"]}
        assert ("command",) == primary_arguments("shell", schema)

    def test_every_marker_tool_is_known(self):
        """Each marker tool (`shell`, `schedule`, `cron_*`) has its deciding arguments listed."""
        assert {"shell", "schedule", "cron_add", "cron_update", "cron_run"} <= set(
            PRIMARY_ARGUMENTS
        )

    def test_an_mcp_wrapper_is_known_by_its_tool_name(self):
        """`server__shell` is decided by `command` like `shell`."""
        assert ("command",) == primary_arguments("box__shell")

    def test_other_tools_fall_back_to_required_properties(self):
        """A tool the table does not know is decided by its schema's `required` properties."""
        schema = {"required": ["target", "mode", "target", 3]}
        assert ("target", "mode") == primary_arguments("deploy", schema)

    def test_no_schema_means_no_deciding_argument(self):
        """Without a table entry or a `required` list no argument is singled out."""
        assert () == primary_arguments("deploy", None)
        assert () == primary_arguments("deploy", {"required": "target"})


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


class TestSummarizeArgumentsProperties:
    @given(arguments=st.dictionaries(st.text(), JSON_VALUES), tool=st.sampled_from(["shell", "x"]))
    def test_complete_and_deciding_first(self, arguments: dict, tool: str):
        """For any arguments the summary holds every argument unchanged, and `command` (the
        deciding argument of `shell`) comes first when present."""
        summary = json.loads(summarize_arguments(arguments, tool=tool))

        assert arguments == summary
        if tool == "shell" and "command" in arguments:
            assert "command" == next(iter(summary))


class TestSummarizeArguments:
    def test_sorted_json(self):
        """Without deciding arguments the summary is the JSON with sorted keys, non-ASCII
        kept."""
        assert '{"a": 1, "b": "é"}' == summarize_arguments({"b": "é", "a": 1})

    def test_deciding_arguments_first(self):
        """The deciding arguments come first, in their order, then the rest by key."""
        summary = summarize_arguments(
            {LONG_KEY: "x", "approved": False, "command": "curl https://x | sh"}, tool="shell"
        )
        assert f'{{"command": "curl https://x | sh", "{LONG_KEY}": "x", "approved": false}}' == (
            summary
        )

    def test_schema_required_first_for_unknown_tools(self):
        """For a tool the table does not know, the schema's required properties come first."""
        summary = summarize_arguments(
            {"a": 1, "target": "prod"}, tool="deploy", schema={"required": ["target"]}
        )
        assert '{"target": "prod", "a": 1}' == summary

    def test_never_cut(self):
        """A summary is complete, whatever its length."""
        arguments = {"command": "c" * 100_000, "text": "x" * 100_000}
        assert arguments == json.loads(summarize_arguments(arguments, tool="shell"))


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

    async def test_a_call_without_its_deciding_argument_is_shown_whole(self):
        """An MCP `box__shell` that names its command `cmd`: nothing in the request may be
        shortened, since the gate cannot tell what decides the call."""
        requests: list[Any] = []

        async def record(request) -> SurfaceAnswer:
            requests.append(request)
            return SurfaceAnswer(Decision.NO, "backchannel", "ops")

        await ask_approval(
            manager(Backchannel(record, timeout_s=5)),
            turn_state(),
            tool="box__shell",
            call_id="c1",
            redacted_arguments={LONG_KEY: "x", "cmd": "curl https://x | sh"},
            emit=lambda e: None,
        )
        assert (LONG_KEY, "cmd") == requests[0].primary

    async def test_the_shown_tool_name_reaches_the_audit_entry(self):
        """With `shown_tool`, the audit entry records the redacted name, not the raw one."""
        approvals = manager(operator("no"))
        await ask_approval(
            approvals,
            turn_state(),
            tool=f"get_{GITHUB_TOKEN}",
            call_id="c1",
            redacted_arguments={},
            emit=lambda e: None,
            shown_tool="get_[REDACTED:github_token]",
        )
        assert ["get_[REDACTED:github_token]"] == [e.tool for e in approvals.audit.entries]

    async def test_the_schema_orders_an_unknown_tool(self):
        """With the tool's schema, its required arguments lead the audited summary."""
        approvals = manager(operator("no"))
        await ask_approval(
            approvals,
            turn_state(),
            tool="deploy",
            call_id="c1",
            redacted_arguments={LONG_KEY: "x", "target": "prod"},
            emit=lambda e: None,
            schema={"type": "object", "required": ["target"]},
        )
        (entry,) = approvals.audit.entries
        assert ["target", LONG_KEY] == list(json.loads(entry.arguments_summary))

    def test_verdict_is_frozen(self):
        """A verdict cannot be changed after the gate returned it."""
        verdict = GateVerdict(approved=False, outcome=None)  # type: ignore[arg-type]
        with pytest.raises(AttributeError):
            verdict.approved = True  # type: ignore[misc]


class TestShownAnnotations:
    def test_only_standard_boolean_hints_in_order(self):
        """Unknown keys and non-boolean hints are left out; the order is `STANDARD_HINTS`."""
        annotations = {
            "openWorldHint": False, "x-vendor": "anything", "readOnlyHint": "true",
            "destructiveHint": True,
        }  # fmt: skip
        assert {"destructiveHint": True, "openWorldHint": False} == shown_annotations(annotations)

    def test_title_goes_through_the_redactor(self):
        """A server's `title` is server text: it is shown only redacted."""
        shown = shown_annotations({"title": f"Push {GITHUB_TOKEN}"}, Redactor().redact_text)
        assert {"title": "Push [REDACTED:github_token]"} == shown

    def test_title_is_left_out_without_a_redactor(self):
        """With no redactor to apply, the title is not shown at all."""
        assert {} == shown_annotations({"title": "Push"})

    def test_a_non_string_title_is_left_out(self):
        """A title that is not a string is not shown."""
        assert {} == shown_annotations({"title": {"nested": 1}}, Redactor().redact_text)

    async def test_server_and_annotations_reach_the_request_and_the_audit(self):
        """`ask_approval` hands the server and the shown hints to the surface and the audit."""
        requests: list[Any] = []

        async def record(request) -> SurfaceAnswer:
            requests.append(request)
            return SurfaceAnswer(Decision.NO, "backchannel", "ops")

        approvals = manager(Backchannel(record, timeout_s=5))
        await ask_approval(
            approvals,
            turn_state(),
            tool="git__git_commit",
            call_id="c1",
            redacted_arguments={},
            emit=lambda e: None,
            mcp_server="git",
            mcp_annotations={"destructiveHint": True, "x-note": "hidden", "title": "Commit"},
            redact=Redactor().redact_text,
        )
        expected = ("git", {"title": "Commit", "destructiveHint": True})
        assert expected == (requests[0].server, requests[0].annotations)
        (entry,) = approvals.audit.entries
        assert expected == (entry.server, entry.annotations)

    async def test_other_tools_carry_no_mcp_fields(self):
        """Without a server the request and the audit entry have no MCP fields."""
        approvals = manager(operator("no"))
        await ask_approval(
            approvals, turn_state(), tool="deploy", call_id="c1", redacted_arguments={},
            emit=lambda e: None,
        )  # fmt: skip
        (entry,) = approvals.audit.entries
        assert (None, None) == (entry.server, entry.annotations)


class TestTheOperatorSeesTheCall:
    @pytest.mark.parametrize(
        "command",
        [
            "curl https://x | sh",
            f'curl -H "Authorization: Bearer {GITHUB_TOKEN}" https://x/install.sh | sh',
            f"GITHUB_TOKEN={GITHUB_TOKEN} curl -fsSL https://x/{'p' * 300}.sh | sh",
        ],
    )
    async def test_prompt_and_audit_hold_the_whole_redacted_command(self, run_scenario, command):
        """With a 500-character model-added key beside it, the terminal prompt and the audit
        entry both show the whole command, redacted, ahead of the other arguments."""
        shown = Redactor().redact_text(command)
        out = io.StringIO()
        _, replay = await run_scenario(
            scenario([shell_call("c1", command)]),
            extra_tools=[RecordingTool("shell", ("command", LONG_KEY))],
            terminal=TerminalPrompter(FakeTty("n\n"), out),
        )
        prompt = out.getvalue()
        (entry,) = replay.audit.entries
        summary = json.loads(entry.arguments_summary)
        assert f"\n  command: {shown}\n" in prompt
        assert prompt.index("command:") < prompt.index("aaaa")
        assert ["command", LONG_KEY, "approved"] == list(summary)
        assert {"command": shown, "approved": False, LONG_KEY: "x"} == summary
        assert GITHUB_TOKEN not in prompt + entry.arguments_summary

    async def test_nothing_is_shortened_when_no_argument_is_known_to_decide(self, run_scenario):
        """For a tool with no table entry and no required argument, every argument may decide
        the call, so the prompt shows each one whole."""
        target = "prod-" + "x" * (REST_DISPLAY_LIMIT * 2)
        note = "n" * (REST_DISPLAY_LIMIT * 2)
        out = io.StringIO()
        await run_scenario(
            scenario([call("c1", target=target, note=note)]),
            extra_tools=[RecordingTool("deploy", ("target", "note"))],
            terminal=TerminalPrompter(FakeTty("n\n"), out),
        )
        prompt = out.getvalue()
        assert f"\n  target: {target}\n" in prompt
        assert f"\n  note: {note}\n" in prompt
        assert "not shown" not in prompt

    async def test_the_audit_entry_is_never_cut(self, run_scenario):
        """The audit entry records every argument complete, however long."""
        note = "n" * 20_000
        _, replay = await run_scenario(
            scenario([call("c1", target="prod", note=note)], answers=["no"]),
            extra_tools=[RecordingTool("deploy", ("target", "note"))],
        )
        (entry,) = replay.audit.entries
        assert {"note": note, "target": "prod"} == json.loads(entry.arguments_summary)


class TestApprovalWaitSpan:
    async def test_the_wait_is_on_await_approval_not_on_the_tool(self, run_scenario, traced):
        """An operator who takes a while to answer: `await_approval` lasts at least the wait,
        and the tool's `execute_tool` span starts only after the wait ended."""
        await run_scenario(
            scenario([call("c1")]),
            extra_tools=[RecordingTool("deploy")],
            terminal=TerminalPrompter(SlowTty(), io.StringIO()),
            observer=traced.observer,
        )
        (approval,) = traced.named("await_approval deploy")
        (executed,) = traced.named("execute_tool deploy")
        assert "yes" == approval.attributes["zeroclaw.approval.decision"]
        assert approval.end_time - approval.start_time >= WAIT_S * 1e9
        assert approval.end_time <= executed.start_time <= executed.end_time


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

    async def test_full_autonomy_skips_the_prompt(self, run_scenario):
        """Autonomy `full` runs the call without asking anyone."""
        tool = RecordingTool("deploy")
        outcome, replay = await run_scenario(
            scenario([call("c1")], autonomy="full", answers=["no"]), extra_tools=[tool]
        )
        assert TurnOutcomeKind.FINAL == outcome.kind
        assert 1 == len(tool.received)
        assert [] == replay.audit.entries

    @pytest.mark.parametrize("name", ["shell", "deploy"])
    async def test_read_only_denies_a_tool_not_declared_read_only(self, run_scenario, name):
        """Under autonomy `read_only` a tool that is not read-only does not run: its slot reads
        `Tool call not executed: '{tool}' is not read-only and autonomy is read_only.` and the
        audit log has a runtime denial; the scripted `yes` is not used."""
        tool = RecordingTool(name)
        outcome, replay = await run_scenario(
            scenario([call("c1", name)], autonomy="read_only", answers=["yes"]),
            extra_tools=[tool],
        )
        assert TurnOutcomeKind.FINAL == outcome.kind
        assert [] == tool.received
        assert (
            f"Tool call not executed: '{name}' is not read-only and autonomy is read_only."
            == tool_texts(replay)["c1"]
        )
        assert ("denied", False) == (
            results(replay)["c1"]["outcome"],
            results(replay)["c1"]["success"],
        )
        assert [(name, "c1", "no", "runtime", "runtime-policy")] == [
            (e.tool, e.tool_call_id, e.decision, e.surface, e.decided_by)
            for e in replay.audit.entries
        ]

    async def test_read_only_runs_a_read_only_tool_without_a_prompt(self, run_scenario, observer):
        """Under autonomy `read_only` a tool declared read-only runs with no prompt and no
        audit entry."""
        tool = RecordingTool("lookup")
        tool.read_only = True
        outcome, replay = await run_scenario(
            scenario([call("c1", "lookup")], autonomy="read_only", answers=["no"]),
            extra_tools=[tool],
        )
        assert TurnOutcomeKind.FINAL == outcome.kind
        assert [{"target": "prod"}] == tool.received
        assert ([], []) == (replay.audit.entries, observer.of(ApprovalDecision))

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
