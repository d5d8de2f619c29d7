"""Scripted tools: tools whose behaviour a scenario file describes.

A scripted tool is a real `Tool` (schema-validated, dispatched, timed out, receipted like any
other); only its body is a table of rules: the first rule whose `when` keys all equal the
dispatched arguments wins, else the `default`. A rule may return output, fail with an error,
raise, or hang (until the per-tool timeout or cancellation ends it), after an optional delay:
`delay_ms`, plus up to `jitter_ms` more drawn uniformly for each call, so a replayed scenario
spreads its tool latencies the way real tools do. The draw uses the tool's own generator, never
the process-wide `random` state. A rule's `switch_model` asks the running turn to continue on
that model (`request_model_switch`, the API a Python tool calls) before its outcome.

A scripted tool is `read_only` when its scenario entry says `read_only: true` or carries the MCP
annotation `readOnlyHint: true` (`annotations: {readOnlyHint: true}`, kept on the tool for the
MCP wrapper); otherwise it is not.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from ..scenario import ScenarioTool
from ..turn.model_switch import request_model_switch
from .base import Provenance, Tool, ToolResult
from .mcp import read_only_hint

__all__ = ["ScriptedTool", "ScriptedToolError"]


class ScriptedToolError(RuntimeError):
    """Raised by a scripted tool whose rule says `raise`."""


class ScriptedTool(Tool):
    """A tool that replays a scenario's rules."""

    def __init__(
        self,
        spec: ScenarioTool,
        *,
        provenance: Provenance = Provenance.NATIVE,
        rng: random.Random | None = None,
    ) -> None:
        """Bind the tool to its rules.

        Args:
            spec: the scenario's tool: name, description, schema and rules.
            provenance: native, or extension for an MCP server's tool.
            rng: draws the `jitter_ms` part of each delay; when None, a fresh unseeded one is
                made at the first jittered call (seeding costs ~10 µs, paid only if used).
        """
        self.name = spec.name
        self.description = spec.description
        self.provenance = provenance
        self._schema = spec.parameters
        self._rules = spec.responses
        self._rng = rng
        # Read with defaults: a scenario model without these fields declares nothing.
        self.annotations: dict[str, Any] = dict(getattr(spec, "annotations", None) or {})
        """The MCP annotations the scenario gives this tool (empty when none)."""
        self.read_only = bool(getattr(spec, "read_only", False)) or read_only_hint(self.annotations)

    def parameters_schema(self) -> dict[str, Any]:
        return self._schema

    async def execute(self, args: dict[str, Any]) -> ToolResult:
        rule = next((r for r in self._rules if r.matches(args)), None)
        if rule is None:
            return ToolResult.fail(f"no scripted response matches these arguments for {self.name}")
        outcome = rule.inline_outcome()
        delay_ms = outcome.delay_ms
        if outcome.jitter_ms:
            if self._rng is None:
                self._rng = random.Random()
            delay_ms += self._rng.uniform(0, outcome.jitter_ms)
        if delay_ms:
            await asyncio.sleep(delay_ms / 1000)
        if outcome.switch_model is not None:
            # As a Python tool does; a refusal raises (`Error executing {name}: …`).
            request_model_switch(outcome.switch_model)
        if outcome.hang:
            await asyncio.Event().wait()
        if outcome.raise_ is not None:
            raise ScriptedToolError(outcome.raise_)
        if outcome.error is not None:
            return ToolResult.fail(outcome.error)
        return ToolResult.ok(outcome.output or "")
