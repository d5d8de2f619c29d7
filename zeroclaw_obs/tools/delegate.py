"""`delegate`: hand a task to a named sub-agent of the agent file and read its answer.

This module owns what the model sees of delegation: the tool's name, its description (the
sub-agents and what each is for) and its schema, whose `agent` property is an `enum` of the
sub-agents' names, so a name the file does not define is refused before anything runs
(`Error: invalid arguments: agent: must be one of […]`). Running the sub-agent is the turn's
business: tools know nothing of the loop, so `execute` hands `(agent, task)` to a runner the
turn gives it (`turn/delegation.py` runs the sub-agent as a nested turn and returns its
final text).

Risky part: the tool is built per turn, bound to that turn's runner (its cancellation, its
iteration budget, its activated tools). A `DelegateTool` kept past its turn would run a
sub-agent against a finished turn's state; the loop therefore builds a fresh one for each
turn and never registers it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .base import Provenance, Tool, ToolResult

__all__ = ["DELEGATE", "DelegateRunner", "DelegateTool"]

DELEGATE = "delegate"
"""The tool's name; the duplicate guard never skips it (LIFECYCLE §4 step 7)."""

DelegateRunner = Callable[[str, str], Awaitable[ToolResult]]
"""Runs sub-agent `agent` on `task` and returns the tool's result (`turn/delegation.py`)."""


def _one_line(text: str) -> str:
    return " ".join(text.split())


class DelegateTool(Tool):
    """`delegate({"agent": name, "task": text})`: a sub-agent does the task; its final answer
    is the result.

    It is read-only in the sense of `Tool.read_only`: the call itself changes nothing outside
    the turn, and everything the sub-agent does goes through the sub-agent's own preparation
    and approval gate, under an approval policy no looser than its parent's. So delegation
    stays available under `autonomy: read_only` (where the sub-agent can run only read-only
    tools too). Whether a call to it needs approval follows the ordinary rules
    (`auto_approve: [delegate]` to run it unasked under `supervised`).

    Args:
        agents: each sub-agent's name and description, in the order the file lists them.
        run: the turn's runner.

    Raises:
        ValueError: `agents` is empty (the tool is offered only when there is a sub-agent).
    """

    name = DELEGATE
    provenance = Provenance.NATIVE
    read_only = True

    def __init__(self, agents: Mapping[str, str], run: DelegateRunner) -> None:
        if not agents:
            raise ValueError("delegate needs at least one sub-agent")
        self.agents = dict(agents)
        """Sub-agent name → description."""
        self._run = run
        lines = [
            f"- {name}" + (f": {_one_line(text)}" if text.strip() else "")
            for name, text in self.agents.items()
        ]
        self.description = (
            "Hand a task to a sub-agent. It works on it alone, with its own tools, and its "
            "final answer is this tool's result. Give it everything it needs in `task`: it "
            "does not see this conversation.\nSub-agents:\n" + "\n".join(lines)
        )

    def parameters_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                "agent": {"type": "string", "enum": list(self.agents)},
                "task": {"type": "string"},
            },
            "required": ["agent", "task"],
        }

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        agent, task = args.get("agent"), args.get("task")
        if not isinstance(agent, str) or agent not in self.agents:
            return ToolResult.fail("agent must be one of the sub-agents listed")
        if not isinstance(task, str) or not task.strip():
            return ToolResult.fail("task must not be empty")
        return await self._run(agent, task.strip())
