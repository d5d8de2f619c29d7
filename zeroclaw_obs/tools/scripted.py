"""Scripted tools: tools whose behaviour a scenario file describes.

A scripted tool is a real `Tool` (schema-validated, dispatched, timed out, receipted like any
other); only its body is a table of rules: the first rule whose `when` keys all equal the
dispatched arguments wins, else the `default`. A rule may return output, fail with an error,
raise, or hang (until the per-tool timeout or cancellation ends it), after an optional delay.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..scenario import ScenarioTool
from .base import Provenance, Tool, ToolResult

__all__ = ["ScriptedTool", "ScriptedToolError"]


class ScriptedToolError(RuntimeError):
    """Raised by a scripted tool whose rule says `raise`."""


class ScriptedTool(Tool):
    """A tool that replays a scenario's rules."""

    def __init__(self, spec: ScenarioTool, *, provenance: Provenance = Provenance.NATIVE) -> None:
        self.name = spec.name
        self.description = spec.description
        self.provenance = provenance
        self._schema = spec.parameters
        self._rules = spec.responses

    def parameters_schema(self) -> dict[str, Any]:
        return self._schema

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        rule = next((r for r in self._rules if r.matches(args)), None)
        if rule is None:
            return ToolResult.fail(f"no scripted response matches these arguments for {self.name}")
        outcome = rule.inline_outcome()
        if outcome.delay_ms:
            await asyncio.sleep(outcome.delay_ms / 1000)
        if outcome.hang:
            await asyncio.Event().wait()
        if outcome.raise_ is not None:
            raise ScriptedToolError(outcome.raise_)
        if outcome.error is not None:
            return ToolResult.fail(outcome.error)
        return ToolResult.ok(outcome.output or "")
