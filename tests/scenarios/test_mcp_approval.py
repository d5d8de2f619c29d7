"""MCP tool annotations feed approval, from a scenario file to the audit (issue 12, DESIGN §7).

Scripted MCP servers stand in for real ones here: their tools carry the annotations a server
lists, and the approval rules read nothing else.
"""

from __future__ import annotations

import io
import json
from typing import Any

from zeroclaw_obs.approval import TerminalPrompter, runtime_denial_text
from zeroclaw_obs.observability.events import ToolOutcome

GITHUB_TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"

COMMIT = {
    "name": "git_commit",
    "parameters": {"type": "object", "properties": {"message": {"type": "string"}}},
    "annotations": {"destructiveHint": True, "idempotentHint": False},
    "responses": [{"default": {"output": "committed"}}],
}
STATUS = {
    "name": "git_status",
    "annotations": {"readOnlyHint": True, "title": f"Status {GITHUB_TOKEN}"},
    "responses": [{"default": {"output": "clean"}}],
}
BARE = {"name": "git_push", "responses": [{"default": {"output": "pushed"}}]}
CONFUSED = {
    "name": "git_gc",
    "annotations": {"readOnlyHint": True, "destructiveHint": True},
    "responses": [{"default": {"output": "collected"}}],
}


class FakeTty(io.StringIO):
    """A terminal stand-in: reads scripted lines and claims to be a TTY."""

    def isatty(self) -> bool:
        return True


def scenario(tool: str, **approval: Any) -> dict[str, Any]:
    """One call to `git__{tool}`, then a final answer."""
    call = {"id": "c1", "name": f"git__{tool}", "arguments": {"message": "wip"}}
    if tool != "git_commit":
        call["arguments"] = {}
    return {
        "user": "tidy the repository",
        "config": {"approval": approval},
        "mcp_servers": [{"name": "git", "tools": [COMMIT, STATUS, BARE, CONFUSED]}],
        "responses": [{"tool_calls": [call]}, {"text": "done"}],
    }


def result(replay: Any) -> dict[str, Any]:
    (event,) = [e.data for e in replay.events.events if e.type == "tool_result"]
    return event


class TestGuardedMcpTools:
    async def test_destructive_is_asked_interactively(self, run_scenario):
        """A destructive tool prompts; the operator's yes runs it."""
        out = io.StringIO()
        _, replay = await run_scenario(
            scenario("git_commit", auto_approve=["*"]),
            terminal=TerminalPrompter(FakeTty("y\n"), out),
        )
        assert "committed" == result(replay)["output"]
        assert out.getvalue().startswith(
            "Approval required: git__git_commit (MCP server git; destructive: "
            "destructiveHint=true, idempotentHint=false)\n"
        )
        assert ["cli"] == [e.surface for e in replay.audit.entries]

    async def test_no_annotations_is_asked_interactively(self, run_scenario):
        """A tool whose server sent no annotations prompts, and says so."""
        out = io.StringIO()
        _, replay = await run_scenario(
            scenario("git_push", auto_approve=["*"]),
            terminal=TerminalPrompter(FakeTty("n\n"), out),
        )
        assert ToolOutcome.DENIED.value == result(replay)["outcome"]
        first = out.getvalue().splitlines()[0]
        assert "Approval required: git__git_push (MCP server git; no annotations)" in first

    async def test_destructive_is_denied_non_interactively(self, run_scenario):
        """With nobody to ask, the runtime denies the call by policy and audits it."""
        _, replay = await run_scenario(
            scenario("git_commit", mode="non_interactive", auto_approve=["*"])
        )
        assert runtime_denial_text("git__git_commit") == result(replay)["output"]
        (entry,) = replay.audit.entries
        assert ("runtime", "git") == (entry.surface, entry.server)

    async def test_auto_approve_by_name_overrides_destructive(self, run_scenario):
        """Naming the tool in `auto_approve` runs it unasked, and nothing is audited."""
        _, replay = await run_scenario(
            scenario("git_commit", mode="non_interactive", auto_approve=["git__git_commit"])
        )
        assert "committed" == result(replay)["output"]
        assert [] == replay.audit.entries

    async def test_contradictory_hints_count_as_destructive(self, run_scenario):
        """`readOnlyHint` with `destructiveHint: true` is not auto-approved as read-only."""
        _, replay = await run_scenario(
            scenario("git_gc", mode="non_interactive", auto_approve_read_only=True)
        )
        assert runtime_denial_text("git__git_gc") == result(replay)["output"]


class TestReadOnlyMcpTools:
    async def test_runs_without_a_prompt_with_the_flag(self, run_scenario):
        """`auto_approve_read_only: true` runs a `readOnlyHint` tool with no prompt or audit."""
        _, replay = await run_scenario(
            scenario("git_status", mode="non_interactive", auto_approve_read_only=True)
        )
        assert "clean" == result(replay)["output"]
        assert [] == replay.audit.entries

    async def test_prompts_without_the_flag(self, run_scenario):
        """By default a read-only MCP tool is asked about like any other."""
        out = io.StringIO()
        _, replay = await run_scenario(
            scenario("git_status"), terminal=TerminalPrompter(FakeTty("y\n"), out)
        )
        assert "clean" == result(replay)["output"]
        first = out.getvalue().splitlines()[0]
        assert first.startswith("Approval required: git__git_status (MCP server git; read-only: ")

    async def test_the_title_is_redacted_in_prompt_and_audit(self, run_scenario):
        """The server's `title` is server text: prompt and audit show it redacted."""
        out = io.StringIO()
        _, replay = await run_scenario(
            scenario("git_status"), terminal=TerminalPrompter(FakeTty("n\n"), out)
        )
        (entry,) = replay.audit.entries
        line = json.dumps(entry.to_json_dict())
        assert GITHUB_TOKEN not in out.getvalue() + line
        assert {"title": "Status [REDACTED:github_token]", "readOnlyHint": True} == (
            entry.annotations
        )


class TestAuditOfMcpTools:
    async def test_the_entry_appends_server_and_annotations(self, run_scenario):
        """The audit line keeps DESIGN §4's keys in order and appends server and annotations."""
        _, replay = await run_scenario(scenario("git_commit", answers=["no"]))
        (entry,) = replay.audit.entries
        line = json.loads(json.dumps(entry.to_json_dict()))
        assert [
            "timestamp", "turn_id", "tool_call_id", "tool", "arguments_summary", "decision",
            "surface", "decided_by", "server", "annotations",
        ] == list(line)  # fmt: skip
        assert ("git__git_commit", "git") == (line["tool"], line["server"])
        assert {"destructiveHint": True, "idempotentHint": False} == line["annotations"]
