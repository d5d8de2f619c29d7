"""`autonomy: read_only` from a scenario file: only tools declared read-only run (issue 10)."""

from __future__ import annotations

from zeroclaw_obs.approval import read_only_denial_text
from zeroclaw_obs.observability.events import ToolOutcome

READ_CONFIG = {
    "name": "read_config",
    "read_only": True,
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    "responses": [{"default": {"output": "debug = false"}}],
}
SHELL = {
    "name": "shell",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    "responses": [{"default": {"output": "ran"}}],
}
LOOKUP = {
    "name": "lookup",
    "annotations": {"readOnlyHint": True},
    "responses": [{"default": {"output": "found"}}],
}
WIPE = {
    "name": "wipe",
    "annotations": {"destructiveHint": True},
    "responses": [{"default": {"output": "wiped"}}],
}


def scenario() -> dict:
    calls = [
        {"id": "c1", "name": "read_config", "arguments": {"path": "app.env"}},
        {"id": "c2", "name": "shell", "arguments": {"command": "rm -rf /tmp/x"}},
        {"id": "c3", "name": "kb__lookup", "arguments": {}},
        {"id": "c4", "name": "kb__wipe", "arguments": {}},
    ]
    return {
        "user": "look around",
        "config": {"approval": {"autonomy": "read_only", "answers": ["yes", "yes"]}},
        "tools": [READ_CONFIG, SHELL],
        "mcp_servers": [{"name": "kb", "tools": [LOOKUP, WIPE]}],
        "responses": [{"tool_calls": calls}, {"text": "done"}],
    }


class TestReadOnlyScenario:
    async def test_only_declared_read_only_tools_run(self, run_scenario):
        """`read_only: true` and `readOnlyHint: true` run; the others get the read-only denial."""
        _, replay = await run_scenario(scenario())
        results = {e.id: e.data for e in replay.events.events if e.type == "tool_result"}
        assert ToolOutcome.SUCCESS.value == results["c1"]["outcome"]
        assert ToolOutcome.SUCCESS.value == results["c3"]["outcome"]
        assert read_only_denial_text("shell") == results["c2"]["output"]
        assert read_only_denial_text("kb__wipe") == results["c4"]["output"]

    async def test_denials_are_audited_as_runtime_and_use_no_answer(self, run_scenario):
        """Each denial is a runtime entry; the scripted answers are never consumed."""
        _, replay = await run_scenario(scenario())
        entries = [(e.tool_call_id, e.surface, e.decision) for e in replay.audit.entries]
        assert [("c2", "runtime", "no"), ("c4", "runtime", "no")] == entries
