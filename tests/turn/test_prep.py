"""Tests for `zeroclaw_obs.turn.prep`: per-call preparation of one response (LIFECYCLE §4).

Each step is driven through a whole scripted turn, so a test sees what the model, the approver
and the tool see: slot texts in the history, audit entries, and the arguments a programmatic
tool actually received.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from zeroclaw_obs.observability.events import TurnOutcomeKind
from zeroclaw_obs.tools.base import Tool, ToolResult
from zeroclaw_obs.turn.prep import (
    CHANNEL_AWARE_TOOLS,
    DEDUP_ALWAYS_EXEMPT,
    MARKER_TOOLS,
    shell_repeat_abort_text,
)

SHELL_REPEAT_ABORT = (
    "Agent loop aborted: repeated prompt-required tool call 'shell' with identical arguments "
    "before approval."
)


class RecordingTool(Tool):
    """A programmatic tool that keeps the arguments of every call it receives."""

    def __init__(
        self, name: str, properties: dict[str, Any] | None = None, *, closed: bool = False
    ) -> None:
        self.name = name
        self.description = f"{name} (test)"
        self._schema: dict[str, Any] = {"type": "object", "properties": properties or {}}
        if closed:
            self._schema["additionalProperties"] = False
        self.received: list[dict[str, Any]] = []

    def parameters_schema(self) -> dict[str, Any]:
        return self._schema

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        self.received.append(dict(args))
        return ToolResult.ok(f"{self.name} ran")


def call(name: str, cid: str | None, **arguments: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "arguments": arguments}


def calls(*items: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": list(items)}


def scenario(*responses: dict[str, Any], channel: str = "cli", **config: Any) -> dict[str, Any]:
    return {
        "agent": {"channel": channel},
        "user": "go",
        "config": config,
        "responses": [*responses, {"text": "done"}],
    }


def tool_texts(replay) -> dict[str, str]:
    """The model-visible result of each call id, from the provider-visible history."""
    return {m["tool_call_id"]: m["content"] for m in replay.state.messages if m["role"] == "tool"}


def outcomes(replay) -> dict[str, str]:
    """The outcome of each call id, from the `tool_result` TurnEvents."""
    return {e.id: e.data["outcome"] for e in replay.events.events if e.type == "tool_result"}


ANYTHING = {"approval": {"auto_approve": ["*"]}}


class TestDeliveryDefaults:
    @pytest.mark.parametrize("name", sorted(CHANNEL_AWARE_TOOLS))
    async def test_absent_channel_is_the_turn_channel(self, run_scenario, name):
        """A channel-aware tool called without `channel` gets the turn's channel."""
        tool = RecordingTool(name, {"question": {"type": "string"}, "channel": {"type": "string"}})
        await run_scenario(
            scenario(calls(call(name, "c1", question="ok?")), channel="telegram", **ANYTHING),
            extra_tools=[tool],
        )
        assert [{"question": "ok?", "channel": "telegram"}] == tool.received

    async def test_present_channel_is_kept(self, run_scenario):
        """A `channel` the model chose is not overwritten by the turn's channel."""
        tool = RecordingTool("ask_user", {"channel": {"type": "string"}})
        await run_scenario(
            scenario(
                calls(call("ask_user", "c1", channel="slack")), channel="telegram", **ANYTHING
            ),
            extra_tools=[tool],
        )
        assert [{"channel": "slack"}] == tool.received

    @pytest.mark.parametrize("channel", ["agent", "daemon"])
    async def test_no_default_on_agent_and_daemon_channels(self, run_scenario, channel):
        """Turns on the `agent` and `daemon` channels get no delivery default."""
        tool = RecordingTool("poll", {"channel": {"type": "string"}})
        await run_scenario(
            scenario(calls(call("poll", "c1")), channel=channel, **ANYTHING), extra_tools=[tool]
        )
        assert [{}] == tool.received

    async def test_other_tools_get_no_channel(self, run_scenario):
        """A tool that is not channel-aware never gets a `channel` argument."""
        tool = RecordingTool("notify", {"channel": {"type": "string"}})
        await run_scenario(
            scenario(calls(call("notify", "c1")), channel="telegram", **ANYTHING),
            extra_tools=[tool],
        )
        assert [{}] == tool.received


class TestApprovedMarker:
    @pytest.mark.parametrize("name", sorted(MARKER_TOOLS))
    async def test_model_cannot_pre_approve(self, run_scenario, name):
        """A model-supplied `"approved": true` reaches the approver as false."""
        tool = RecordingTool(name, {"command": {"type": "string"}})
        _, replay = await run_scenario(
            scenario(
                calls(call(name, "c1", command="x", approved=True)),
                approval={"answers": ["no"]},
            ),
            extra_tools=[tool],
        )
        (entry,) = replay.audit.entries
        assert {"approved": False, "command": "x"} == json.loads(entry.arguments_summary)
        assert [] == tool.received

    @pytest.mark.parametrize("name", sorted(MARKER_TOOLS))
    async def test_approved_call_runs_with_true(self, run_scenario, name):
        """A marker tool the operator approved receives `"approved": true`."""
        tool = RecordingTool(name, {"command": {"type": "string"}})
        await run_scenario(
            scenario(calls(call(name, "c1", command="x")), approval={"answers": ["yes"]}),
            extra_tools=[tool],
        )
        assert [{"command": "x", "approved": True}] == tool.received

    async def test_marker_is_inserted_when_absent(self, run_scenario):
        """The approver sees `"approved": false` even when the model sent no such key."""
        tool = RecordingTool("shell", {"command": {"type": "string"}})
        _, replay = await run_scenario(
            scenario(calls(call("shell", "c1", command="ls")), approval={"answers": ["no"]}),
            extra_tools=[tool],
        )
        summary = replay.audit.entries[0].arguments_summary
        assert {"approved": False, "command": "ls"} == json.loads(summary)

    async def test_read_only_autonomy_keeps_false(self, run_scenario):
        """A read-only marker tool under `read_only` needs no approval: it runs with false."""
        tool = RecordingTool("shell", {"command": {"type": "string"}})
        tool.read_only = True
        await run_scenario(
            scenario(
                calls(call("shell", "c1", command="ls", approved=True)),
                approval={"autonomy": "read_only"},
            ),
            extra_tools=[tool],
        )
        assert [{"command": "ls", "approved": False}] == tool.received

    async def test_full_autonomy_approves(self, run_scenario):
        """Autonomy `full` approves the call, so the marker is set back to true."""
        tool = RecordingTool("cron_add", {"command": {"type": "string"}})
        await run_scenario(
            scenario(calls(call("cron_add", "c1", command="x")), approval={"autonomy": "full"}),
            extra_tools=[tool],
        )
        assert [{"command": "x", "approved": True}] == tool.received

    async def test_other_tools_keep_their_arguments(self, run_scenario):
        """A tool that is not a marker tool gets `approved` neither inserted nor reset."""
        with_key = RecordingTool("file_write", {"approved": {"type": "boolean"}})
        without_key = RecordingTool("file_read")
        await run_scenario(
            scenario(
                calls(call("file_write", "c1", approved=True), call("file_read", "c2")),
                **ANYTHING,
            ),
            extra_tools=[with_key, without_key],
        )
        assert ([{"approved": True}], [{}]) == (with_key.received, without_key.received)

    async def test_closed_schema_accepts_the_runtime_marker(self, run_scenario):
        """A schema with `additionalProperties: false` does not reject the runtime's marker."""
        tool = RecordingTool("shell", {"command": {"type": "string"}}, closed=True)
        _, replay = await run_scenario(
            scenario(
                calls(call("shell", "c1", command="ls", approved=True)),
                approval={"answers": ["yes"]},
            ),
            extra_tools=[tool],
        )
        assert {"c1": "success"} == outcomes(replay)
        assert [{"command": "ls", "approved": True}] == tool.received

    async def test_model_value_of_a_declared_marker_is_not_validated(self, run_scenario):
        """The model's own `approved` value is discarded before validation, whatever its type."""
        tool = RecordingTool(
            "shell", {"command": {"type": "string"}, "approved": {"type": "boolean"}}
        )
        _, replay = await run_scenario(
            scenario(
                calls(call("shell", "c1", command="ls", approved="yes please")),
                approval={"answers": ["yes"]},
            ),
            extra_tools=[tool],
        )
        assert {"c1": "success"} == outcomes(replay)
        assert [{"command": "ls", "approved": True}] == tool.received


class TestUnknownAndExcluded:
    async def test_unknown_tool_is_refused_before_the_gate(self, run_scenario):
        """An unknown name reads `Unknown tool: {name}` and nobody is asked about it."""
        shell = RecordingTool("shell", {"command": {"type": "string"}})
        _, replay = await run_scenario(
            scenario(
                calls(call("nope", "c1", x=1), call("shell", "c2", command="ls")),
                approval={"answers": ["yes"]},
            ),
            extra_tools=[shell],
        )
        assert "Unknown tool: nope" == tool_texts(replay)["c1"]
        assert {"c1": "unknown", "c2": "success"} == outcomes(replay)
        assert ["c2"] == [e.tool_call_id for e in replay.audit.entries]

    async def test_excluded_tool_is_refused_before_the_gate(self, run_scenario):
        """Exclusion is trimmed and case-insensitive: `Tool not available in this turn: {name}`."""
        weather = RecordingTool("get_weather", {"city": {"type": "string"}})
        shell = RecordingTool("shell", {"command": {"type": "string"}})
        _, replay = await run_scenario(
            scenario(
                calls(call("get_weather", "c1", city="Paris"), call("shell", "c2", command="ls")),
                excluded_tools=[" Get_Weather "],
                approval={"answers": ["yes"]},
            ),
            extra_tools=[weather, shell],
        )
        assert "Tool not available in this turn: get_weather" == tool_texts(replay)["c1"]
        assert {"c1": "excluded", "c2": "success"} == outcomes(replay)
        assert [] == weather.received
        assert ["c2"] == [e.tool_call_id for e in replay.audit.entries]

    async def test_exclusion_runs_before_the_unknown_check(self, run_scenario):
        """An excluded name in any case reads `Tool not available in this turn: GET_SECRET`."""
        secret = RecordingTool("get_secret", {})
        _, replay = await run_scenario(
            scenario(
                calls(call("GET_SECRET", "c1"), call("get_secret", "c2")),
                excluded_tools=["get_secret"],
            ),
            extra_tools=[secret],
        )
        texts = tool_texts(replay)
        assert "Tool not available in this turn: GET_SECRET" == texts["c1"]
        assert "Tool not available in this turn: get_secret" == texts["c2"]
        assert {"c1": "excluded", "c2": "excluded"} == outcomes(replay)
        assert [] == secret.received


class TestInvalidArguments:
    async def test_schema_violation_is_a_failed_slot(self, run_scenario):
        """Arguments that violate the schema read `Error: invalid arguments: …` and never run."""
        tool = RecordingTool("get_weather", {"city": {"type": "string"}})
        tool._schema["required"] = ["city"]
        _, replay = await run_scenario(
            scenario(calls(call("get_weather", "c1", town="Paris")), approval={"answers": ["yes"]}),
            extra_tools=[tool],
        )
        assert tool_texts(replay)["c1"].startswith("Error: invalid arguments: ")
        assert "city" in tool_texts(replay)["c1"]
        assert {"c1": "error"} == outcomes(replay)
        assert ([], []) == (tool.received, replay.audit.entries)

    @pytest.mark.parametrize(
        ("raw", "problem"),
        [
            ("{not json", "arguments are not valid JSON"),
            ("[1, 2]", "arguments must be a JSON object"),
        ],
    )
    async def test_native_argument_string_that_is_no_object(self, run_scenario, raw, problem):
        """A native call whose JSON-string arguments are not an object fails before the gate."""
        tool = RecordingTool("get_weather", {"city": {"type": "string"}})
        _, replay = await run_scenario(
            scenario(
                calls({"id": "c1", "name": "get_weather", "arguments": raw}),
                approval={"answers": ["yes"]},
            ),
            extra_tools=[tool],
        )
        assert f"Error: invalid arguments: {problem}" == tool_texts(replay)["c1"]
        assert {"c1": "error"} == outcomes(replay)
        assert ([], []) == (tool.received, replay.audit.entries)

    async def test_native_argument_string_is_decoded(self, run_scenario):
        """A native call whose arguments are a valid JSON object string runs with them decoded."""
        tool = RecordingTool("get_weather", {"city": {"type": "string"}})
        await run_scenario(
            scenario(
                calls({"id": "c1", "name": "get_weather", "arguments": '{"city": "Oslo"}'}),
                **ANYTHING,
            ),
            extra_tools=[tool],
        )
        assert [{"city": "Oslo"}] == tool.received


class TestShellRepeatAbortText:
    def test_exact_text(self):
        """The guard's text is exactly LIFECYCLE §4's abort sentence."""
        assert SHELL_REPEAT_ABORT == shell_repeat_abort_text()


class TestShellRepeatGuard:
    @pytest.mark.parametrize(("answer", "runs"), [("no", 0), ("yes", 1)])
    async def test_same_call_in_a_later_iteration_aborts(self, run_scenario, answer, runs):
        """The same prompt-required shell call asked again in iteration 2 aborts the turn."""
        shell = RecordingTool("shell", {"command": {"type": "string"}})
        outcome, replay = await run_scenario(
            scenario(
                calls(call("shell", "c1", command="ls")),
                calls(call("shell", "c2", command="ls")),
                approval={"answers": [answer, "yes"]},
            ),
            extra_tools=[shell],
        )
        assert TurnOutcomeKind.ABORTED == outcome.kind
        assert SHELL_REPEAT_ABORT == outcome.text
        assert (2, runs) == (outcome.iterations, len(shell.received))
        assert ["c1"] == [e.tool_call_id for e in replay.audit.entries]

    async def test_different_command_does_not_abort(self, run_scenario):
        """A shell call with different arguments in a later iteration is asked normally."""
        shell = RecordingTool("shell", {"command": {"type": "string"}})
        outcome, replay = await run_scenario(
            scenario(
                calls(call("shell", "c1", command="ls")),
                calls(call("shell", "c2", command="ls -la")),
                approval={"answers": ["no", "yes"]},
            ),
            extra_tools=[shell],
        )
        assert TurnOutcomeKind.FINAL == outcome.kind
        assert ["c1", "c2"] == [e.tool_call_id for e in replay.audit.entries]
        assert [{"command": "ls -la", "approved": True}] == shell.received

    async def test_repeat_in_the_same_response_is_a_duplicate(self, run_scenario):
        """An identical shell repeat in one response is a duplicate, asked about only once."""
        shell = RecordingTool("shell", {"command": {"type": "string"}})
        outcome, replay = await run_scenario(
            scenario(
                calls(call("shell", "c1", command="ls"), call("shell", "c2", command="ls")),
                approval={"answers": ["yes"]},
            ),
            extra_tools=[shell],
        )
        expected = "Skipped duplicate tool call 'shell' with identical arguments in this turn."
        assert TurnOutcomeKind.FINAL == outcome.kind
        assert expected == tool_texts(replay)["c2"]
        assert {"c1": "success", "c2": "deduplicated"} == outcomes(replay)
        assert ["c1"] == [e.tool_call_id for e in replay.audit.entries]
        assert 1 == len(shell.received)

    async def test_auto_approved_shell_never_aborts(self, run_scenario):
        """A shell call that needs no prompt may repeat across iterations."""
        shell = RecordingTool("shell", {"command": {"type": "string"}})
        outcome, _ = await run_scenario(
            scenario(
                calls(call("shell", "c1", command="ls")),
                calls(call("shell", "c2", command="ls")),
                approval={"auto_approve": ["shell"]},
            ),
            extra_tools=[shell],
        )
        assert TurnOutcomeKind.FINAL == outcome.kind
        assert 2 == len(shell.received)

    async def test_other_prompt_required_tools_are_asked_again(self, run_scenario):
        """The guard is for `shell` only: another prompt-required tool is simply asked again."""
        tool = RecordingTool("file_write", {"path": {"type": "string"}})
        outcome, replay = await run_scenario(
            scenario(
                calls(call("file_write", "c1", path="a")),
                calls(call("file_write", "c2", path="a")),
                approval={"answers": ["no", "yes"]},
            ),
            extra_tools=[tool],
        )
        assert TurnOutcomeKind.FINAL == outcome.kind
        assert ["c1", "c2"] == [e.tool_call_id for e in replay.audit.entries]


class TestDuplicateGuard:
    DUPLICATE = "Skipped duplicate tool call 'lookup' with identical arguments in this turn."

    async def test_reordered_nested_keys_are_a_duplicate(self, run_scenario):
        """Keys are compared sorted recursively, so reordered nested keys are a duplicate."""
        tool = RecordingTool("lookup")
        _, replay = await run_scenario(
            scenario(
                calls(
                    {"id": "c1", "name": "lookup", "arguments": {"a": 1, "b": {"c": 2, "d": 3}}},
                    {"id": "c2", "name": "lookup", "arguments": {"b": {"d": 3, "c": 2}, "a": 1}},
                ),
                **ANYTHING,
            ),
            extra_tools=[tool],
        )
        assert self.DUPLICATE == tool_texts(replay)["c2"]
        assert {"c1": "success", "c2": "deduplicated"} == outcomes(replay)
        assert 1 == len(tool.received)

    async def test_different_arguments_are_not_a_duplicate(self, run_scenario):
        """A nested value that differs makes a different call."""
        tool = RecordingTool("lookup")
        await run_scenario(
            scenario(
                calls(
                    {"id": "c1", "name": "lookup", "arguments": {"b": {"c": 2}}},
                    {"id": "c2", "name": "lookup", "arguments": {"b": {"c": 3}}},
                ),
                **ANYTHING,
            ),
            extra_tools=[tool],
        )
        assert 2 == len(tool.received)

    async def test_scope_is_one_response(self, run_scenario):
        """The same call in the next model response is not a duplicate."""
        tool = RecordingTool("lookup")
        _, replay = await run_scenario(
            scenario(
                calls(call("lookup", "c1", q=1)), calls(call("lookup", "c2", q=1)), **ANYTHING
            ),
            extra_tools=[tool],
        )
        assert {"c1": "success", "c2": "success"} == outcomes(replay)

    @pytest.mark.parametrize(("exempt", "runs"), [(["lookup"], 2), (["Lookup"], 1)])
    async def test_dedup_exempt_tools_match_exactly(self, run_scenario, exempt, runs):
        """`dedup_exempt_tools` exempts a tool by its exact name only."""
        tool = RecordingTool("lookup")
        await run_scenario(
            scenario(
                calls(call("lookup", "c1", q=1), call("lookup", "c2", q=1)),
                dedup_exempt_tools=exempt,
                **ANYTHING,
            ),
            extra_tools=[tool],
        )
        assert runs == len(tool.received)

    @pytest.mark.parametrize("name", sorted(DEDUP_ALWAYS_EXEMPT))
    async def test_agent_tools_are_always_exempt(self, run_scenario, name):
        """`spawn_subagent` and `delegate` run every identical call."""
        tool = RecordingTool(name, {"task": {"type": "string"}})
        await run_scenario(
            scenario(calls(call(name, "c1", task="t"), call(name, "c2", task="t")), **ANYTHING),
            extra_tools=[tool],
        )
        assert 2 == len(tool.received)
