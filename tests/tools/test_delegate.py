"""Tests for `zeroclaw_obs.tools.delegate`: what the model sees of `delegate`, and what a call
hands to the turn's runner. Whole delegated turns are in `tests/scenarios/test_delegation.py`."""

from __future__ import annotations

import pytest

from zeroclaw_obs.tools.base import ToolResult
from zeroclaw_obs.tools.delegate import DELEGATE, DelegateTool

AGENTS = {"researcher": "Looks things up\n  on the web", "writer": ""}


class Runner:
    """Records the calls it is handed and answers with a fixed result."""

    def __init__(self, result: ToolResult | None = None) -> None:
        self.calls: list[tuple[str, str]] = []
        self.result = result or ToolResult.ok("done")

    async def __call__(self, agent: str, task: str) -> ToolResult:
        self.calls.append((agent, task))
        return self.result


class TestDelegateTool:
    def test_the_schema_names_the_sub_agents(self):
        """`agent` is an enum of the sub-agents in file order; both arguments are required."""
        schema = DelegateTool(AGENTS, Runner()).parameters_schema()

        assert ["researcher", "writer"] == schema["properties"]["agent"]["enum"]
        assert ["agent", "task"] == schema["required"]
        assert DELEGATE == DelegateTool(AGENTS, Runner()).spec.name == "delegate"

    def test_the_description_lists_each_sub_agent_on_one_line(self):
        description = DelegateTool(AGENTS, Runner()).description

        lines = "Sub-agents:\n- researcher: Looks things up on the web\n- writer"
        assert description.endswith(lines)

    def test_an_unknown_name_fails_validation(self):
        problem = DelegateTool(AGENTS, Runner()).validate_arguments({"agent": "x", "task": "t"})

        assert "agent: must be one of ['researcher', 'writer']" == problem.message

    async def test_a_call_hands_the_agent_and_the_trimmed_task_to_the_runner(self):
        runner = Runner(ToolResult.fail("sub-agent failed"))
        tool = DelegateTool(AGENTS, runner)

        result = await tool.execute({"agent": "writer", "task": "  draft it \n"})

        assert [("writer", "draft it")] == runner.calls
        assert ToolResult.fail("sub-agent failed") == result

    @pytest.mark.parametrize(
        ("args", "error"),
        [
            ({"agent": "writer", "task": "  "}, "task must not be empty"),
            ({"agent": "editor", "task": "x"}, "agent must be one of the sub-agents listed"),
        ],
    )
    async def test_a_call_the_runner_cannot_serve_fails_without_it(self, args, error):
        runner = Runner()

        result = await DelegateTool(AGENTS, runner).execute(args)

        assert ToolResult.fail(error) == result
        assert [] == runner.calls

    def test_it_is_read_only(self):
        """The call changes nothing itself: the sub-agent's calls meet their own gate."""
        assert DelegateTool(AGENTS, Runner()).read_only

    def test_it_needs_a_sub_agent(self):
        with pytest.raises(ValueError, match="at least one sub-agent"):
            DelegateTool({}, Runner())
