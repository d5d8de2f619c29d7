"""MCP tool annotations feed approval, from a scenario file to the audit (issue 12, DESIGN §7).

Scripted MCP servers carry the annotations a server lists (the approval rules read nothing
else); `TestRealServers` checks the same rules against real server processes
(`mcp-server-time` from PyPI, and the SDK toolbox server of `tests/tools/mcp_servers`),
connected for each test and stopped after it.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tests.conftest import make_replay
from zeroclaw_obs.approval import TerminalPrompter, runtime_denial_text
from zeroclaw_obs.observability.events import ToolOutcome
from zeroclaw_obs.tools.mcp import McpServer
from zeroclaw_obs.tools.mcp_client import StdioParams
from zeroclaw_obs.tools.mcp_session import McpConnection

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


TOOLBOX = Path(__file__).parents[1] / "tools" / "mcp_servers" / "toolbox.py"
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"


@contextlib.asynccontextmanager
async def real_server(name: str, command: str, args: list[str]) -> AsyncIterator[McpServer]:
    """A real stdio server process, connected for the test and stopped after it."""
    connection = McpConnection(name, StdioParams(command=command, args=args))
    await connection.start()
    try:
        yield await McpServer.connect(connection)
    finally:
        await connection.aclose()


async def run_with(server: McpServer, tool: str, arguments: dict, **kwargs: Any) -> Any:
    """One scripted-model turn calling `tool` of the real `server`."""
    data = {
        "user": "go",
        "config": {"approval": kwargs.pop("approval", {})},
        "responses": [
            {"tool_calls": [{"id": "c1", "name": tool, "arguments": arguments}]},
            {"text": "done"},
        ],
    }
    replay = make_replay(data, **kwargs)
    replay.execution.mcp_servers.append(server)
    await replay.run()
    return replay


class TestRealServers:
    async def test_read_only_time_server_runs_with_the_flag(self):
        """mcp-server-time lists read-only tools: with the flag a call runs unasked."""
        async with real_server("time", str(TIME_SERVER), ["--local-timezone", "UTC"]) as server:
            replay = await run_with(
                server, "time__get_current_time", {"timezone": "UTC"},
                approval={"mode": "non_interactive", "auto_approve_read_only": True},
            )  # fmt: skip
        assert '"timezone": "UTC"' in result(replay)["output"]
        assert [] == replay.audit.entries

    async def test_read_only_time_server_is_asked_about_without_the_flag(self):
        """Without the flag the same call is asked about; the prompt names server and hints."""
        out = io.StringIO()
        async with real_server("time", str(TIME_SERVER), ["--local-timezone", "UTC"]) as server:
            replay = await run_with(
                server, "time__get_current_time", {"timezone": "UTC"},
                terminal=TerminalPrompter(FakeTty("n\n"), out),
            )  # fmt: skip
        assert ToolOutcome.DENIED.value == result(replay)["outcome"]
        first = out.getvalue().splitlines()[0]
        assert first.startswith("Approval required: time__get_current_time (MCP server time;")
        assert "read-only" in first and "readOnlyHint=true" in first
        (entry,) = replay.audit.entries
        assert ("time", True) == (entry.server, entry.annotations["readOnlyHint"])

    async def test_destructive_tool_is_denied_non_interactively(self):
        """A real `destructiveHint` tool is denied by the runtime when nobody can be asked."""
        async with real_server("box", sys.executable, [str(TOOLBOX)]) as server:
            replay = await run_with(
                server, "box__fail", {"reason": "x"},
                approval={"mode": "non_interactive", "auto_approve": ["*"],
                          "auto_approve_read_only": True},
            )  # fmt: skip
        assert runtime_denial_text("box__fail") == result(replay)["output"]
        (entry,) = replay.audit.entries
        assert ("box", {"destructiveHint": True}) == (
            entry.server,
            {k: v for k, v in entry.annotations.items() if k == "destructiveHint"},
        )

    async def test_unannotated_tool_is_asked_interactively(self):
        """A real tool without annotations is asked about, and runs on yes."""
        out = io.StringIO()
        async with real_server("box", sys.executable, [str(TOOLBOX)]) as server:
            replay = await run_with(
                server, "box__shout", {"text": "hi"},
                approval={"auto_approve": ["*"]},
                terminal=TerminalPrompter(FakeTty("y\n"), out),
            )  # fmt: skip
        assert ToolOutcome.SUCCESS.value == result(replay)["outcome"]
        assert "(MCP server box; no annotations)" in out.getvalue().splitlines()[0]
