"""Turns against MCP servers people install: the npm reference server and `mcp-server-git`.

A scripted model drives each turn (deterministic); the servers are the published packages,
started as real processes: `@modelcontextprotocol/server-everything` (annotated tools,
progress, images, structured content; `.ci/run` installs it under `.cache/node`) and
`mcp-server-git` from PyPI (read-only and destructive tools over a real repository).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.system import node_binary
from zeroclaw_obs.approval.manager import runtime_denial_text
from zeroclaw_obs.observability.events import ToolOutcome

GIT_SERVER = Path(sys.executable).parent / "mcp-server-git"


def turn(server: dict[str, Any], calls: list[dict[str, Any]], **approval: Any) -> dict[str, Any]:
    return {
        "user": "go",
        "config": {"approval": approval},
        "mcp_servers": [server],
        "responses": [{"tool_calls": calls}, {"text": "done"}],
    }


def results(replay: Any) -> dict[str, dict[str, Any]]:
    return {e.id: e.data for e in replay.events.events if e.type == "tool_result"}


@pytest.fixture
def everything() -> dict[str, Any]:
    command = node_binary("mcp-server-everything", "@modelcontextprotocol/server-everything")
    return {"name": "ev", "command": command, "args": ["stdio"], "timeout_s": 30}


class TestServerEverything:
    async def test_read_only_tools_run_unasked_and_render(self, run_scenario, everything):
        """Annotated read-only tools run under `auto_approve_read_only`; content is rendered."""
        calls = [
            {"id": "e1", "name": "ev__echo", "arguments": {"message": "hello"}},
            {"id": "e2", "name": "ev__get-tiny-image", "arguments": {}},
            {"id": "e3", "name": "ev__get-sum", "arguments": {"a": 2, "b": 3}},
        ]
        data = turn(everything, calls, mode="non_interactive", auto_approve_read_only=True)
        _, replay = await run_scenario(data)
        got = results(replay)
        assert [ToolOutcome.SUCCESS.value] * 3 == [got[c]["outcome"] for c in ("e1", "e2", "e3")]
        assert "hello" in got["e1"]["output"]
        assert "[image: image/png" in got["e2"]["output"]
        assert "5" in got["e3"]["output"]
        assert [] == replay.audit.entries

    async def test_progress_of_a_long_operation_streams(self, run_scenario, everything):
        """`trigger-long-running-operation` reports each step as TurnEvent `tool_progress`."""
        calls = [
            {
                "id": "p1",
                "name": "ev__trigger-long-running-operation",
                "arguments": {"duration": 0.3, "steps": 3},
            }
        ]
        data = turn(everything, calls, mode="non_interactive", auto_approve_read_only=True)
        _, replay = await run_scenario(data)
        progress = [e for e in replay.events.events if e.type == "tool_progress"]
        assert ["p1", "p1", "p1"] == [e.id for e in progress]
        assert ToolOutcome.SUCCESS.value == results(replay)["p1"]["outcome"]

    async def test_an_unannotated_write_is_denied_without_an_operator(
        self, run_scenario, everything
    ):
        """A tool that is neither read-only nor declared non-destructive needs a by-name yes."""
        calls = [{"id": "t1", "name": "ev__toggle-simulated-logging", "arguments": {}}]
        data = turn(everything, calls, mode="non_interactive", auto_approve_read_only=True)
        _, replay = await run_scenario(data)
        expected = runtime_denial_text("ev__toggle-simulated-logging")
        assert expected == results(replay)["t1"]["output"]


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("one\n")
    git = ["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    (repo / "a.txt").write_text("two\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    return repo


def git_server(repo: Path) -> dict[str, Any]:
    return {"name": "git", "command": str(GIT_SERVER), "args": ["--repository", str(repo)]}


class TestMcpServerGit:
    async def test_status_is_read_only_and_runs_unasked(self, run_scenario, repository):
        """`git_status` declares `readOnlyHint`: it runs without a prompt and shows the change."""
        calls = [
            {"id": "s1", "name": "git__git_status", "arguments": {"repo_path": str(repository)}}
        ]
        data = turn(
            git_server(repository), calls, mode="non_interactive", auto_approve_read_only=True
        )
        _, replay = await run_scenario(data)
        assert "a.txt" in results(replay)["s1"]["output"]

    async def test_a_destructive_reset_is_denied_non_interactively(self, run_scenario, repository):
        """`git_reset` declares `destructiveHint`: nobody to ask means a runtime denial."""
        calls = [
            {"id": "r1", "name": "git__git_reset", "arguments": {"repo_path": str(repository)}}
        ]
        data = turn(
            git_server(repository),
            calls,
            mode="non_interactive",
            auto_approve=["*"],
            auto_approve_read_only=True,
        )
        _, replay = await run_scenario(data)
        assert runtime_denial_text("git__git_reset") == results(replay)["r1"]["output"]
        staged = subprocess.run(
            ["git", "-C", str(repository), "diff", "--cached", "--name-only"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert "a.txt\n" == staged  # nothing was reset
        (entry,) = replay.audit.entries
        assert ("runtime", "git", True) == (
            entry.surface,
            entry.server,
            entry.annotations["destructiveHint"],
        )

    async def test_a_destructive_reset_is_asked_and_runs_on_yes(self, run_scenario, repository):
        """Asked (the scripted operator answers yes), the reset runs and is audited as asked."""
        calls = [
            {"id": "r1", "name": "git__git_reset", "arguments": {"repo_path": str(repository)}}
        ]
        data = turn(git_server(repository), calls, answers=["yes"])
        _, replay = await run_scenario(data)
        assert ToolOutcome.SUCCESS.value == results(replay)["r1"]["outcome"]
        staged = subprocess.run(
            ["git", "-C", str(repository), "diff", "--cached", "--name-only"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        assert "" == staged
        (entry,) = replay.audit.entries
        assert ("yes", "git") == (entry.decision, entry.server)
